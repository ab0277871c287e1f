"""Plans, gap reports and workflows as a person runs them: `toolgate plan`, `workflow run`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml
from tests.cli.helpers import toolgate, toolgate_task
from tests.support.scripted_model import ScriptedModel
from tests.tools.helpers import manifest, write_tool

ROOT = Path(__file__).resolve().parents[2]

RENDER_PLAN = {
    "goal": "Publish the README as HTML",
    "steps": [
        {
            "step_id": "read",
            "capability": "fs.read",
            "inputs": {"path": "README.md"},
            "on_failure": "fail",
            "coverage_confidence": 0.95,
            "coverage_rationale": "read_file reads a file",
        },
        {
            "step_id": "render",
            "capability": "docs.render",
            "inputs": {"markdown": "${steps.read.output.content}"},
            "capability_contract": {"required_inputs": ["markdown"], "required_outputs": ["html"]},
            "on_failure": "fail",
            "coverage_confidence": 0.9,
        },
    ],
}


def _plan(root: Path, scripted: ScriptedModel, *extra: str, env: dict | None = None):
    return toolgate_task("plan", "publish the README as HTML", root, scripted, *extra, env=env)


def test_a_plan_with_a_gap_does_not_run_and_names_the_gap(
    repo: Path, scripted: ScriptedModel
) -> None:
    plan = json.loads(json.dumps(RENDER_PLAN))
    plan["steps"].append(
        {
            "step_id": "write",
            "capability": "fs.write",
            "inputs": {"path": "README.html", "content": "${steps.render.output.html}"},
        }
    )
    scripted.script = [{"content": "Here is the plan:\n```json\n" + json.dumps(plan) + "\n```"}]
    done = _plan(repo, scripted, "--run", "--approve", "auto")
    assert done.returncode == 1, done.stderr
    assert "status: partial" in done.stdout
    assert "render docs.render: no_capability_match" in done.stdout
    assert (
        "scaffold: toolgate tools new docs_render --capability docs.render --input markdown "
        "--output html" in done.stdout
    )
    assert "missing: render docs.render\n" in done.stdout
    assert "done: none" in done.stdout
    assert not (repo / "README.html").exists()
    # The model was shown the published schema and the registry's capabilities.
    prompt = scripted.requests[0]["messages"][0]["content"]
    assert '"coverage_confidence"' in prompt and "- fs.read: read_file" in prompt
    assert "tools" not in scripted.requests[0]
    (kept,) = (repo / ".toolgate" / "plans").glob("*.json")
    report = json.loads(kept.read_text())
    assert report["status"] == "partial"
    (gap,) = report["gaps"]
    assert gap["missing_capability"] == "docs.render" and gap["priority"] == "high"
    assert gap["proposed_output_schema"]["required"] == ["html"]
    assert [s["tool"] for s in report["steps"]] == ["read_file", None, "write_file"]


def test_a_step_that_names_no_capability_says_how_to_fix_it(
    repo: Path, scripted: ScriptedModel
) -> None:
    plan = json.loads(json.dumps(RENDER_PLAN))
    plan["steps"][1]["capability"] = "tool"  # what small models write where a capability belongs
    scripted.script = [{"content": json.dumps(plan)}]
    done = _plan(repo, scripted)
    assert "render tool: invalid_capability" in done.stdout
    assert "scaffold:" not in done.stdout  # `tools new --capability tool` would be refused
    assert "fix: the step must name a capability as domain.action" in done.stdout


def test_low_confidence_is_a_gap_even_when_a_tool_matches(
    repo: Path, scripted: ScriptedModel
) -> None:
    plan = {
        "goal": "g",
        "steps": [
            {
                "step_id": "look",
                "capability": "code.search",
                "inputs": {"pattern": "TODO"},
                "coverage_confidence": 0.2,
                "coverage_rationale": "not sure search is enough",
            }
        ],
    }
    scripted.script = [{"content": json.dumps(plan)}]
    done = _plan(repo, scripted, "--json")
    assert done.returncode == 1
    (gap,) = json.loads(done.stdout)["gaps"]
    assert gap["reason"] == "low_confidence"
    assert gap["reason_details"]["candidate"] == "search_code"


# Seed 003's plan contract, to the field: steps and no goal.
SEED_PLAN = {
    "steps": [
        {
            "step_id": "read",
            "capability": "fs.read",
            "tool": "read_file",
            "inputs": {"path": "README.md"},
            "on_failure": "fail",
            "capability_contract": {"required_inputs": ["path"], "required_outputs": ["content"]},
            "coverage_confidence": 0.95,
            "coverage_rationale": "read_file reads a file",
        },
        {
            "step_id": "shout",
            "capability": "text.shout",
            "tool": "yell",
            "inputs": {"text": "${steps.read.output.content}"},
            "on_failure": "skip",
            "capability_contract": {"required_inputs": ["text"], "required_outputs": ["text"]},
            "coverage_confidence": 0.8,
            "coverage_rationale": "both tools upper-case a text; yell is the one meant",
        },
    ]
}


def test_a_plan_in_the_seeds_shape_takes_the_request_as_its_goal_and_its_tools(
    repo: Path, scripted: ScriptedModel
) -> None:
    write_tool(repo, manifest("shout"))
    write_tool(repo, manifest("yell", priority=10))  # ranked after shout, but the plan names it
    scripted.script = [{"content": json.dumps(SEED_PLAN)}]
    done = toolgate_task("plan", "shout the README", repo, scripted, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    planned = json.loads(done.stdout)
    assert planned["status"] == "ready" and planned["goal"] == "shout the README"
    assert [s["tool"] for s in planned["steps"]] == ["read_file", "yell"]
    (kept,) = (repo / ".toolgate" / "plans").glob("p-*.json")
    assert json.loads(kept.read_text())["goal"] == "shout the README"
    # A step that names a tool which does not provide its capability gets the registry's own.
    wrong = json.loads(json.dumps(SEED_PLAN))
    wrong["steps"][1]["tool"] = "read_file"
    scripted.script = [{"content": json.dumps(wrong)}]
    again = json.loads(toolgate_task("plan", "shout it", repo, scripted, "--json").stdout)
    assert [s["tool"] for s in again["steps"]] == ["read_file", "shout"]


def test_an_invalid_plan_gets_one_correction(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        {"content": '{"goal": "g", "steps": [{"step_id": "a"}]}'},
        {
            "content": json.dumps(
                RENDER_PLAN["steps"][0] and {"goal": "g", "steps": [RENDER_PLAN["steps"][0]]}
            )
        },
    ]
    done = _plan(repo, scripted, "--json")
    assert done.returncode == 0, done.stderr
    assert "steps.0.capability" in scripted.requests[1]["messages"][-1]["content"]
    assert json.loads(done.stdout)["status"] == "ready"


def test_a_refused_plan_says_so_without_asking_again(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [{"refusal": "I won't plan that."}, {"content": json.dumps(RENDER_PLAN)}]
    done = _plan(repo, scripted, "--json")
    assert done.returncode != 0
    assert "no plan: the model refused: I won't plan that." in done.stderr + done.stdout
    assert len(scripted.requests) == 1


FLAKY = """import json, pathlib, sys
args = json.load(sys.stdin)
count = pathlib.Path("attempts")
n = int(count.read_text()) + 1 if count.exists() else 1
count.write_text(str(n))
if n < 2:
    print("flaky: not yet", file=sys.stderr)
    sys.exit(1)
json.dump({"text": "made " + args["text"], "length": n}, sys.stdout)
"""
BROKEN = "import sys; print('broken on purpose', file=sys.stderr); sys.exit(2)\n"

WORKFLOW = {
    "name": "make-and-shout",
    "description": "Make a text, shout it, write it.",
    "inputs": {"word": {"type": "string"}, "target": {"type": "string", "default": "out.txt"}},
    "steps": [
        {
            "step_id": "make",
            "capability": "text.make",
            "inputs": {"text": "${inputs.word}"},
            "on_failure": "retry",
        },
        {
            "step_id": "decorate",
            "capability": "text.decorate",
            "inputs": {"text": "${steps.make.output.text}"},
            "on_failure": "skip",
        },
        {
            "step_id": "shout",
            "capability": "text.shout",
            "inputs": {"text": "${steps.make.output.text}"},
            "on_failure": "fail",
        },
        {
            "step_id": "write",
            "capability": "fs.write",
            "inputs": {"path": "${inputs.target}", "content": "${steps.shout.output.text}"},
        },
    ],
}


def _workflow_workspace(root: Path) -> None:
    for name, capability, code in (
        ("flaky", "text.make", FLAKY),
        ("decorate", "text.decorate", BROKEN),
        ("shout", "text.shout", None),
    ):
        doc = manifest(name, capabilities=[capability])
        write_tool(root, doc, code) if code else write_tool(root, doc)
    folder = root / ".agent" / "workflows"
    folder.mkdir(parents=True)
    (folder / "make-and-shout.yaml").write_text(yaml.safe_dump(WORKFLOW, sort_keys=False))
    trusted = toolgate("tools", "trust", "--yes", "--workspace", str(root))
    assert trusted.returncode == 0, trusted.stderr


def _run_log(root: Path) -> dict:
    (log,) = (root / ".toolgate" / "runs").glob("w-*.json")
    return json.loads(log.read_text())


def _make_and_shout(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`toolgate workflow run make-and-shout word=hello` on repo, changes approved."""
    return toolgate(
        "workflow",
        "run",
        "make-and-shout",
        "word=hello",
        *extra,
        "--workspace",
        str(repo),
        "--approve",
        "auto",
    )


def test_two_step_workflow_passes_outputs_with_retry_and_skip(repo: Path) -> None:
    _workflow_workspace(repo)
    done = _make_and_shout(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (repo / "out.txt").read_text() == "MADE HELLO"
    assert (repo / "tools" / "flaky" / "attempts").read_text() == "2"
    assert "done: make text.make, shout text.shout, write fs.write" in done.stdout
    assert "skipped: decorate text.decorate" in done.stdout
    assert "[flaky] flaky: not yet" in done.stderr  # stderr streamed as progress
    log = _run_log(repo)
    assert log["status"] == "completed"
    assert log["account"]["done"] == ["make text.make", "shout text.shout", "write fs.write"]
    calls = [c for step in log["steps"] for c in step["calls"]]
    assert [c["step_id"] for c in calls] == ["make", "make", "decorate", "shout", "write"]
    assert calls[3]["arguments"] == {"text": "made hello"}
    finished = [e for e in log["events"] if e["type"] == "run_finished"]
    assert finished[0]["done"] == log["account"]["done"] and finished[0]["missing"] == []


def test_dry_run_runs_nothing(repo: Path) -> None:
    _workflow_workspace(repo)
    before = sorted(p.relative_to(repo) for p in repo.rglob("*") if ".git" not in p.parts)
    done = _make_and_shout(repo, "target=x.txt", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "dry run: nothing runs" in done.stdout
    assert "make text.make → flaky: " in done.stdout and "main.py" in done.stdout
    assert 'stdin: {"text": "hello"}' in done.stdout
    assert "write fs.write → write_file" in done.stdout and '"path": "x.txt"' in done.stdout
    after = sorted(p.relative_to(repo) for p in repo.rglob("*") if ".git" not in p.parts)
    assert after == before


def test_workflow_inputs_are_checked(repo: Path) -> None:
    _workflow_workspace(repo)
    missing = toolgate("workflow", "run", "make-and-shout", "--workspace", str(repo))
    assert missing.returncode == 2 and "the input 'word' is required" in missing.stderr
    unknown = toolgate(
        "workflow", "run", "make-and-shout", "word=a", "colour=red", "--workspace", str(repo)
    )
    assert unknown.returncode == 2 and "unknown input 'colour'" in unknown.stderr
    nothing = toolgate("workflow", "run", "nope", "--workspace", str(repo))
    assert nothing.returncode == 2 and "saved: make-and-shout" in nothing.stderr


def test_a_denied_capability_ends_the_run_blocked_by_policy(repo: Path) -> None:
    _workflow_workspace(repo)
    (repo / "pyproject.toml").write_text(
        '[tool.toolgate.planning]\ndeny_capabilities = ["text.shout"]\n'
    )
    done = _make_and_shout(repo)
    assert done.returncode == 1
    assert "blocked_by_policy" in done.stdout
    assert "missing: shout text.shout, write fs.write" in done.stdout
    assert not (repo / "out.txt").exists()
    assert _run_log(repo)["status"] == "blocked_by_policy"


def test_max_steps_ends_the_run_blocked_by_policy(repo: Path) -> None:
    _workflow_workspace(repo)
    (repo / "pyproject.toml").write_text("[tool.toolgate.limits]\nmax_steps = 2\n")
    done = _make_and_shout(repo)
    assert done.returncode == 1
    log = _run_log(repo)
    assert log["status"] == "blocked_by_policy" and "max_steps" in log["reason"]
    assert log["account"]["missing"] == ["shout text.shout", "write fs.write"]


def test_a_tool_denied_by_the_gate_policy_blocks_the_workflow(repo: Path) -> None:
    _workflow_workspace(repo)
    (repo / "pyproject.toml").write_text('[tool.toolgate.policy]\ndeny_tools = ["shout"]\n')
    done = _make_and_shout(repo)
    assert done.returncode == 1
    assert _run_log(repo)["status"] == "blocked_by_policy"


def test_llm_log_records_requests_and_responses_without_the_key(
    repo: Path, scripted: ScriptedModel
) -> None:
    secret = "sk-test-DO-NOT-LEAK-1234567890"
    scripted.script = [{"content": json.dumps(RENDER_PLAN)}]
    log = repo.parent / "llm.jsonl"
    done = _plan(repo, scripted, "--llm-log", str(log), env={"OPENAI_API_KEY": secret})
    assert "docs.render" in done.stdout, done.stderr
    text = log.read_text()
    assert secret not in text
    entries = [json.loads(line) for line in text.splitlines()]
    request = next(e for e in entries if e["event"] == "request")
    response = next(e for e in entries if e["event"] == "response")
    assert request["call_id"] == response["call_id"] and request["attempt"] == 0
    assert request["headers"]["authorization"] == "[redacted]"
    assert request["payload"]["messages"][1]["content"] == "publish the README as HTML"
    assert response["status"] == 200 and "data:" in response["raw_body"]
    assert json.loads(response["extracted"]["content"]) == RENDER_PLAN


def test_llm_log_from_the_environment_in_a_run(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [{"content": "nothing to do"}]
    done = toolgate_task(
        "run",
        "say hi",
        repo,
        scripted,
        env={"TOOLGATE_LLM_LOG": "1", "OPENAI_API_KEY": "sk-hidden-99"},
    )
    assert done.returncode == 0, done.stderr
    text = (repo / ".toolgate" / "llm-log.jsonl").read_text()
    assert "sk-hidden-99" not in text and "nothing to do" in text


def test_from_a_gap_to_a_scaffolded_tool_in_a_saved_workflow(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": json.dumps(RENDER_PLAN)}]
    planned = _plan(repo, scripted, "--save", "publish")
    assert planned.returncode == 1 and "status: partial" in planned.stdout
    command = next(
        line.split("scaffold: ", 1)[1]
        for line in planned.stdout.splitlines()
        if "scaffold:" in line
    )
    new = toolgate(*command.split()[1:], "--workspace", str(repo))
    assert new.returncode == 0, new.stderr
    assert toolgate("tools", "validate", "--workspace", str(repo)).returncode == 0
    done = toolgate("workflow", "run", "publish", "--workspace", str(repo), "--approve", "auto")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "done: read fs.read, render docs.render" in done.stdout
    render = _run_log(repo)["steps"][1]["calls"][0]
    assert render["result"]["data"]["html"].startswith("markdown=# Tiny project")


def test_workflow_list_names_each_workflow_its_inputs_and_a_broken_one(tmp_path: Path) -> None:
    root = tmp_path / "example"
    shutil.copytree(ROOT / "examples" / "tools", root)
    empty = toolgate("workflow", "list", "--workspace", str(tmp_path))
    assert empty.returncode == 0 and empty.stdout == ""
    assert "no workflows in this workspace" in empty.stderr
    listed = toolgate("workflow", "list", "--workspace", str(root))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "publish-notes  source=… target=…  Render a Markdown file to an HTML page next to it."
    ]
    (root / ".agent" / "workflows" / "broken.yaml").write_text("name: broken\nsteps: 3\n")
    with_broken = toolgate("workflow", "list", "--workspace", str(root))
    assert with_broken.returncode == 1
    first, second = with_broken.stdout.splitlines()
    assert first.startswith("broken  (cannot be used: ") and "broken.yaml" in first
    assert second.startswith("publish-notes  ")


def test_the_worked_example_runs(tmp_path: Path) -> None:
    root = tmp_path / "example"
    shutil.copytree(ROOT / "examples" / "tools", root)
    assert toolgate("tools", "validate", "--workspace", str(root)).returncode == 0
    assert toolgate("tools", "trust", "--yes", "--workspace", str(root)).returncode == 0
    dry = toolgate(
        "workflow",
        "run",
        "publish-notes",
        "source=notes.md",
        "target=notes.html",
        "--dry-run",
        "--workspace",
        str(root),
    )
    assert dry.returncode == 0 and not (root / "notes.html").exists()
    # The workflow's trigger routes the task without a model.
    done = toolgate(
        "plan",
        "publish notes.md as notes.html",
        "--run",
        "--approve",
        "auto",
        "--workspace",
        str(root),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    page = (root / "notes.html").read_text()
    assert (
        "<h1>Release notes</h1>" in page and "<li>workflows run them through the gate</li>" in page
    )


def test_a_workspace_can_raise_min_confidence_but_not_lower_it(tmp_path: Path) -> None:
    from toolgate.config import load_config

    (tmp_path / "pyproject.toml").write_text("[tool.toolgate.planning]\nmin_confidence = 0.1\n")
    assert load_config(tmp_path).planning.get("min_confidence", 0.6) == 0.6
    (tmp_path / "pyproject.toml").write_text("[tool.toolgate.planning]\nmin_confidence = 0.9\n")
    assert load_config(tmp_path).planning["min_confidence"] == 0.9


def test_a_kept_plan_can_be_edited_and_run(repo: Path, scripted: ScriptedModel) -> None:
    plan = {
        "goal": "copy the readme",
        "steps": [
            {"step_id": "read", "capability": "fs.read", "inputs": {"path": "README.md"}},
            {
                "step_id": "write",
                "capability": "fs.write",
                "inputs": {"path": "COPY.md", "content": "${steps.read.output.content}"},
            },
        ],
    }
    scripted.script = [{"content": json.dumps(plan)}]
    done = _plan(repo, scripted, "--json")
    assert done.returncode == 0, done.stderr
    (kept,) = (repo / ".toolgate" / "plans").glob("p-*.json")
    doc = json.loads(kept.read_text())
    doc["steps"][1]["inputs"]["path"] = "EDITED.md"  # the person edits the plan before it runs
    kept.write_text(json.dumps(doc))
    ran = toolgate("workflow", "run", kept.stem, "--workspace", str(repo), "--approve", "auto")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (repo / "EDITED.md").read_text() == "# Tiny project\n"
    assert not (repo / "COPY.md").exists()


def test_structured_output_is_asked_for_and_dropped_when_refused(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        {"status": 400, "error": "response_format json_schema is not supported"},
        {"status": 400, "error": "response_format json_object is not supported"},
        {"content": json.dumps(RENDER_PLAN)},
    ]
    done = _plan(repo, scripted, "--json")
    assert "docs.render" in done.stdout, done.stderr
    first, second, third = scripted.requests
    assert first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["schema"]["title"] == "Toolgate plan"
    assert second["response_format"]["type"] == "json_object"
    assert "response_format" not in third
    assert "refused structured output as json_schema" in done.stderr
    assert "asking for plain JSON" in done.stderr


def test_a_server_that_takes_only_json_object_gets_the_schema_that_way(
    repo: Path, scripted: ScriptedModel
) -> None:
    # llama-cpp-python's server: HTTP 500 to `json_schema`, a grammar from `json_object`'s schema
    scripted.json_schema_500 = True
    scripted.script = [{"content": json.dumps(RENDER_PLAN)}]
    done = _plan(repo, scripted, "--json")
    assert "docs.render" in done.stdout, done.stderr
    # the client tries a 500 once more before it gives up
    *refused, asked = scripted.requests
    assert [r["response_format"]["type"] for r in refused] == ["json_schema"] * 2
    assert asked["response_format"]["type"] == "json_object"
    assert asked["response_format"]["schema"]["title"] == "Toolgate plan"
    assert "trying json_object" in done.stderr

    # The workspace keeps what the endpoint took: the next plan is not refused first.
    scripted.requests.clear()
    scripted.script = [{"content": json.dumps(RENDER_PLAN)}]
    again = _plan(repo, scripted, "--json")
    assert "docs.render" in again.stdout, again.stderr
    [request] = scripted.requests
    assert request["response_format"]["type"] == "json_object"
    assert "refused" not in again.stderr
