"""`toolgate mcp --agent-tools`: the agent as tools, over real stdio, driven by the SDK's client.

The model is the scripted OpenAI-compatible server over real HTTP; git and pytest are real,
in temporary repositories.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import git
from tests.support.scripted_model import ScriptedModel

from toolgate.config import user_config_path

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')

import mcp_types as types  # noqa: E402

from mcp import Client, StdioServerParameters  # noqa: E402

AGENT_TOOLS = {
    "implement_code",
    "review_code",
    "run_tests",
    "refactor_code",
    "generate_documentation",
}

CALC = "def add(a, b):\r\n    return a + b\r\n\r\n\r\ndef mul(a, b):\r\n    return a * b\r\n"
TESTS = (
    "import pytest\n"
    "from calc import add, mul\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n\n\n"
    "@pytest.mark.skip(reason='later')\n"
    "def test_later():\n    assert False\n"
)


def _project(repo: Path) -> Path:
    """A tiny Python project with passing tests, committed."""
    (repo / "calc.py").write_bytes(CALC.encode())
    (repo / "test_calc.py").write_text(TESTS)
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "calc")
    return repo


def _user_config(text: str) -> None:
    """Write the person's own config file (under the test's home) with `text`."""
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _client(
    repo: Path,
    scripted: ScriptedModel | None,
    *args: str,
    elicitation: Any = None,
    mode: str = "legacy",
) -> Client:
    env = {k: os.environ[k] for k in ("XDG_CONFIG_HOME", "XDG_STATE_HOME")}
    # The tests' own interpreter (with pytest and pytest-cov) comes first on PATH.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    if scripted is not None:
        env["OPENAI_BASE_URL"] = scripted.base_url
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolgate", "mcp", "--agent-tools", "--workspace", str(repo), *args],
        env=env,
        cwd=str(repo),
    )
    return Client(params, mode="legacy", read_timeout_seconds=120, elicitation_callback=elicitation)


async def _call(
    client: Client, name: str, progress: list[str] | None = None, **arguments: Any
) -> dict[str, Any]:
    """The `{success, data, error, suggestions, duration_seconds}` a call returns."""

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        if progress is not None:
            progress.append(message or "")

    result = await client.call_tool(
        name, arguments, progress_callback=on_progress if progress is not None else None
    )
    assert len(result.content) == 1 and result.content[0].type == "text"
    payload = json.loads(result.content[0].text)
    assert set(payload) == {"success", "data", "error", "suggestions", "duration_seconds"}
    assert payload == result.structured_content
    assert payload["success"] is not result.is_error
    return payload


# The protocol up to 2025-11-25 (the server asks while the call is in flight) and 2026-07-28
# (the call answers InputRequiredResult and the client's retry carries the answer).
MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])


def _calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "content": "",
        "tool_calls": [
            {"id": f"c{n}", "name": name, "arguments": args} for n, (name, args) in enumerate(calls)
        ],
    }


async def test_tools_are_listed_with_their_schemas(repo: Path) -> None:
    async with _client(repo, None) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert AGENT_TOOLS <= set(listed)
    assert "read_file" in listed  # the low-level tools stay
    implement = listed["implement_code"].input_schema
    assert implement["required"] == ["task_description"]
    assert set(implement["properties"]) == {
        "task_description",
        "acceptance_criteria",
        "context_files",
    }
    assert set(listed["review_code"].input_schema["properties"]) == {
        "diff",
        "files_changed",
        "coding_standards",
        "review_focus",
    }
    assert set(listed["run_tests"].input_schema["properties"]) == {
        "test_scope",
        "test_commands",
        "coverage_required",
    }
    assert listed["refactor_code"].input_schema["required"] == ["file_path", "refactoring_type"]
    assert listed["generate_documentation"].input_schema["properties"]["doc_type"]["enum"]
    assert listed["run_tests"].annotations.read_only_hint is True
    assert listed["implement_code"].annotations.read_only_hint is False


@MODES
async def test_implement_code_returns_the_diff_and_sends_progress(
    repo: Path, scripted: ScriptedModel, mode: str
) -> None:
    _project(repo)
    scripted.script = [
        _calls(
            ("write_file", {"path": "sub.py", "content": "def sub(a, b):\n    return a - b\n"}),
            ("edit_file", {"path": "calc.py", "search": "a * b", "replace": "b * a"}),
        ),
        {"content": "Added sub.py and swapped the factors in mul."},
    ]
    progress: list[str] = []
    async with _client(repo, scripted, "--approve", "auto", mode=mode) as client:
        result = await _call(
            client,
            "implement_code",
            progress,
            task_description="Add a sub function",
            acceptance_criteria=["sub(3, 1) == 2"],
            context_files=["calc.py"],
        )
    assert result["success"] is True, result
    data = result["data"]
    assert data["status"] == "completed"
    assert data["summary"] == "Added sub.py and swapped the factors in mul."
    assert {f["path"]: f["status"] for f in data["files_changed"]} == {
        "calc.py": "modified",
        "sub.py": "added",
    }
    assert "--- a/calc.py\n+++ b/calc.py\n" in data["diff"]
    assert "-    return a * b\r\n" not in data["diff"]  # diffs are of the text, not the bytes
    assert "-    return a * b\n+    return b * a\n" in data["diff"]
    assert "--- /dev/null\n+++ b/sub.py\n@@ -0,0 +1,2 @@\n+def sub(a, b):\n" in data["diff"]
    assert (repo / "sub.py").read_text() == "def sub(a, b):\n    return a - b\n"
    assert result["duration_seconds"] > 0
    # The model was given the task with its criteria and files.
    task = scripted.requests[0]["messages"][-1]["content"]
    assert "Add a sub function" in task and "sub(3, 1) == 2" in task and "calc.py" in task
    # Its own run log and checkpoint.
    run_log = Path(data["run_log"])
    assert json.loads(run_log.read_text())["status"] == "completed"
    assert (repo / ".toolgate" / "runs" / f"{data['run_id']}.checkpoint").is_dir()
    assert data["undo"] == f"toolgate undo {data['run_id']}"
    # Progress went out as notifications while the run went on.
    assert any(line.startswith("write_file sub.py") for line in progress), progress
    assert any(line == f"run {data['run_id']} completed" for line in progress), progress


async def test_run_tests_counts_and_measures_coverage(repo: Path) -> None:
    _project(repo)
    (repo / "test_broken.py").write_text("def test_broken():\n    assert 1 + 1 == 3\n")
    async with _client(repo, None) as client:
        whole = await _call(client, "run_tests", coverage_required=True)
        scoped = await _call(client, "run_tests", test_scope="test_calc.py")
        outside = await _call(client, "run_tests", test_scope="../elsewhere")
        refused = await _call(client, "run_tests", test_commands=["make test"])
    assert whole["success"] is False
    data = whole["data"]
    assert (data["total"], data["passed"], data["failed"], data["skipped"]) == (4, 2, 1, 1)
    assert data["duration_seconds"] > 0
    assert whole["error"] == "1 of 4 tests failed"
    (failure,) = data["failures"]
    assert failure["file"] == "test_broken.py" and failure["line"] == 2
    assert any("test_broken" in line for line in whole["suggestions"])
    coverage = data["coverage"]
    assert coverage["files"]["calc.py"] == 100.0
    assert 0 < coverage["percent"] <= 100
    # The coverage data and report are not left in the workspace.
    assert not (repo / ".coverage").exists()
    assert git(repo, "status", "--porcelain") == "?? test_broken.py\n"
    assert json.loads(Path(data["run_log"]).read_text())["status"] == "failed"

    assert scoped["success"] is True
    assert (scoped["data"]["total"], scoped["data"]["passed"]) == (3, 2)
    assert "coverage" not in scoped["data"]

    assert outside["success"] is False and "'..' is not allowed" in outside["error"]
    assert refused["success"] is False and "does not run pytest" in refused["error"]


async def test_refactor_whose_tests_fail_is_restored_byte_for_byte(
    repo: Path, scripted: ScriptedModel
) -> None:
    _project(repo)
    scripted.script = [
        _calls(
            ("edit_file", {"path": "calc.py", "search": "a * b", "replace": "a ** b"}),
            (
                "write_file",
                {"path": "helpers.py", "content": "def power(a, b):\n    return a ** b\n"},
            ),
        ),
        {"content": "Simplified mul."},
    ]
    before = (repo / "calc.py").read_bytes()
    async with _client(repo, scripted, "--approve", "auto") as client:
        result = await _call(
            client,
            "refactor_code",
            file_path="calc.py",
            refactoring_type="simplify",
            target_scope="mul",
        )
    assert result["success"] is False
    data = result["data"]
    assert data["rolled_back"] is True
    assert sorted(data["restored_files"]) == ["calc.py", "helpers.py"]
    assert data["tests"]["failed"] == 1 and data["tests"]["passed"] == 1
    assert "the tests fail after the refactoring" in result["error"]
    assert (repo / "calc.py").read_bytes() == before
    assert not (repo / "helpers.py").exists()
    assert git(repo, "status", "--porcelain") == ""
    # The restore is an undo of its own, which can bring the refactoring back.
    assert any(f"toolgate undo {data['undo_run_id']}" in s for s in result["suggestions"])
    task = scripted.requests[0]["messages"][-1]["content"]
    assert "mul in calc.py" in task and "simplify" in task


async def test_refactor_whose_tests_pass_is_kept(repo: Path, scripted: ScriptedModel) -> None:
    _project(repo)
    scripted.script = [
        _calls(("edit_file", {"path": "calc.py", "search": "a + b", "replace": "b + a"})),
        {"content": "Reordered."},
    ]
    async with _client(repo, scripted, "--approve", "auto") as client:
        result = await _call(
            client, "refactor_code", file_path="calc.py", refactoring_type="improve_naming"
        )
    assert result["success"] is True, result
    data = result["data"]
    assert data["rolled_back"] is False
    assert data["tests"]["passed"] == 2 and data["tests"]["failed"] == 0
    assert data["changes"] == {"files": 1, "lines_added": 1, "lines_removed": 1}
    assert b"return b + a\r\n" in (repo / "calc.py").read_bytes()


async def test_generate_documentation_writes_docs_and_refuses_code(
    repo: Path, scripted: ScriptedModel
) -> None:
    _project(repo)
    scripted.script = [
        _calls(
            (
                "edit_file",
                {
                    "path": "calc.py",
                    "search": "def add(a, b):\n",
                    "replace": 'def add(a, b):\n    """The sum of a and b."""\n',
                },
            ),
            ("edit_file", {"path": "calc.py", "search": "a * b", "replace": "a * b + 0"}),
            ("write_file", {"path": "notes.py", "content": "x = 1\n"}),
            ("write_file", {"path": "docs/calc.md", "content": "# calc\n"}),
        ),
        {"content": "Documented add."},
    ]
    async with _client(repo, scripted, "--approve", "auto") as client:
        result = await _call(
            client, "generate_documentation", code_files=["calc.py"], doc_type="docstrings"
        )
    data = result["data"]
    assert data["doc_type"] == "docstrings"
    assert sorted(f["path"] for f in data["files_changed"]) == ["calc.py", "docs/calc.md"]
    text = (repo / "calc.py").read_text()
    assert '"""The sum of a and b."""' in text and "a * b + 0" not in text
    assert not (repo / "notes.py").exists()
    refused = " ".join(result["suggestions"])
    assert "alters its code" in refused and "notes.py" in refused
    results = [
        json.loads(m["content"]) for m in scripted.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert [r["success"] for r in results] == [True, False, False, True]


def _elicitation(answer: types.ElicitResult, seen: list[types.ElicitRequestParams]) -> Any:
    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params)
        return answer

    return callback


@MODES
async def test_a_change_accepted_through_elicitation_lands(
    repo: Path, scripted: ScriptedModel, mode: str
) -> None:
    scripted.script = [
        _calls(("write_file", {"path": "hello.txt", "content": "hello\n"})),
        {"content": "Wrote hello.txt."},
    ]
    seen: list[types.ElicitRequestParams] = []
    answer = types.ElicitResult(action="accept", content={"approve": True})
    # The server's own rule is deny: only the person's answer lets the change through.
    async with _client(repo, scripted, elicitation=_elicitation(answer, seen), mode=mode) as client:
        result = await _call(client, "implement_code", task_description="Say hello")
    assert result["success"] is True, result
    (asked,) = seen
    assert asked.message.startswith("Toolgate: Create hello.txt?")
    assert "+++ b/hello.txt" in asked.message and "+hello" in asked.message
    assert (repo / "hello.txt").read_text() == "hello\n"


@MODES
async def test_a_change_rejected_through_elicitation_does_not_land(
    repo: Path, scripted: ScriptedModel, mode: str
) -> None:
    (repo / "README.md").write_text("# Tiny project\n")
    scripted.script = [
        _calls(("edit_file", {"path": "README.md", "search": "Tiny", "replace": "Huge"})),
        {"content": "I could not change the README."},
    ]
    seen: list[types.ElicitRequestParams] = []
    answer = types.ElicitResult(
        action="accept", content={"approve": False, "reason": "keep it tiny"}
    )
    async with _client(
        repo, scripted, "--approve", "auto", elicitation=_elicitation(answer, seen), mode=mode
    ) as client:
        result = await _call(client, "implement_code", task_description="Rename the project")
    assert result["success"] is False
    assert result["data"]["status"] == "incomplete"
    assert result["data"]["files_changed"] == []
    assert "-# Tiny project" in seen[0].message and "+# Huge project" in seen[0].message
    assert any("keep it tiny" in s for s in result["suggestions"])
    assert (repo / "README.md").read_text() == "# Tiny project\n"
    # The model was told why.
    tool = next(m for m in scripted.requests[1]["messages"] if m["role"] == "tool")
    assert "keep it tiny" in tool["content"]


@MODES
async def test_the_person_ticks_the_hunks_of_a_change_through_elicitation(
    repo: Path, scripted: ScriptedModel, mode: str
) -> None:
    old = "".join(f"line {n}\n" for n in range(1, 21))
    (repo / "notes.txt").write_text(old)
    new = old.replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n")
    scripted.script = [
        _calls(("write_file", {"path": "notes.txt", "content": new})),
        {"content": "Changed what was accepted."},
    ]
    seen: list[types.ElicitRequestParams] = []
    answer = types.ElicitResult(
        action="accept", content={"approve": True, "hunk_2": False, "reason": "keep the end"}
    )
    async with _client(repo, scripted, elicitation=_elicitation(answer, seen), mode=mode) as client:
        result = await _call(client, "implement_code", task_description="Spell two numbers")
    (asked,) = seen
    boxes = asked.requested_schema["properties"]
    assert boxes["hunk_1"]["title"].startswith("Hunk 1 of 2: @@ -1,")
    assert "+line two" in boxes["hunk_1"]["description"]
    assert "+line nineteen" in boxes["hunk_2"]["description"]
    # Only the ticked hunk landed; the caller and the model are told about the other.
    assert (repo / "notes.txt").read_text() == old.replace("line 2\n", "line two\n")
    assert "hunk 2 of the change to notes.txt was refused: keep the end" in result["suggestions"]
    tool = next(m for m in scripted.requests[1]["messages"] if m["role"] == "tool")
    assert "keep the end" in tool["content"]


async def test_without_elicitation_the_servers_deny_rule_refuses_and_says_why(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        _calls(("write_file", {"path": "hello.txt", "content": "hello\n"})),
        {"content": "Could not write."},
    ]
    async with _client(repo, scripted) as client:
        result = await _call(client, "implement_code", task_description="Say hello")
    assert result["success"] is False
    assert not (repo / "hello.txt").exists()
    assert any("--approve deny" in s for s in result["suggestions"])
    assert any("--approve auto" in s for s in result["suggestions"])


async def test_a_disabled_tool_is_not_listed_and_cannot_be_called(repo: Path) -> None:
    _user_config("[agent_tools.refactor_code]\nenabled = false\n")
    async with _client(repo, None) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool(
            "refactor_code", {"file_path": "README.md", "refactoring_type": "simplify"}
        )
    assert "refactor_code" not in names
    assert AGENT_TOOLS - {"refactor_code"} <= names
    assert result.is_error and "switched off" in result.content[0].text


async def test_bad_arguments_are_a_result_saying_why(repo: Path) -> None:
    async with _client(repo, None) as client:
        missing = await _call(client, "implement_code")
        outside = await _call(
            client, "implement_code", task_description="x", context_files=["../secret"]
        )
    assert missing["success"] is False
    assert "invalid arguments for implement_code" in missing["error"]
    assert "task_description" in missing["error"]
    assert outside["success"] is False and "'..' is not allowed" in outside["error"]


def test_retry_and_timeout_come_from_the_config(repo: Path) -> None:
    from toolgate.config import ConfigError, load_config

    (repo / ".toolgate").mkdir()
    (repo / ".toolgate" / "config.toml").write_text(
        "[agent_tools.implement_code]\ntimeout_seconds = 30\nretry_count = 2\n"
    )
    settings = load_config(repo).agent_tools["implement_code"]
    assert (settings.timeout_seconds, settings.retry_count, settings.enabled) == (30, 2, True)
    (repo / ".toolgate" / "config.toml").write_text("[agent_tools.implement]\nenabled = false\n")
    with pytest.raises(ConfigError, match="unknown key 'agent_tools.implement'"):
        load_config(repo)


async def test_a_run_that_runs_out_of_time_is_tried_again(
    repo: Path, scripted: ScriptedModel
) -> None:
    _user_config("[agent_tools.implement_code]\ntimeout_seconds = 3\nretry_count = 1\n")
    scripted.script = [
        {"content": "too late", "sleep": 30},
        _calls(("write_file", {"path": "hello.txt", "content": "hello\n"})),
        {"content": "Wrote hello.txt."},
    ]
    progress: list[str] = []
    async with _client(repo, scripted, "--approve", "auto") as client:
        result = await _call(client, "implement_code", progress, task_description="Say hello")
    assert result["success"] is True, result
    assert result["data"]["attempts"] == 2
    assert "attempt 1 of 2 failed; trying again" in progress
    assert (repo / "hello.txt").read_text() == "hello\n"
    logs = [json.loads(p.read_text()) for p in (repo / ".toolgate" / "runs").glob("*.json")]
    (first,) = [doc for doc in logs if doc["status"] == "cancelled"]
    assert "implement_code ran out of time (3s" in first["reason"]


async def test_a_run_out_of_time_without_retries_says_so(
    repo: Path, scripted: ScriptedModel
) -> None:
    _user_config("[agent_tools.implement_code]\ntimeout_seconds = 2\n")
    scripted.script = [{"content": "too late", "sleep": 30}]
    async with _client(repo, scripted, "--approve", "auto") as client:
        result = await _call(client, "implement_code", task_description="Say hello")
    assert result["success"] is False
    assert result["error"].startswith("the run ended cancelled: implement_code ran out of time")
    assert "attempts" not in result["data"]
    assert 2 <= result["duration_seconds"] < 25


REVIEW = {
    "approved": False,
    "comments": [
        {
            "path": "calc.py",
            "line": 2,
            "severity": "error",
            "message": "add subtracts.",
            "suggestion": "    return a + b",
        }
    ],
    "metrics": {"risk": "high"},
}


async def test_review_code_reviews_the_working_tree_by_default(
    repo: Path, scripted: ScriptedModel
) -> None:
    _project(repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    scripted.script = [{"content": json.dumps(REVIEW)}]
    progress: list[str] = []
    async with _client(repo, scripted) as client:
        result = await _call(
            client,
            "review_code",
            progress,
            coding_standards=["no subtraction in add"],
            review_focus="correctness",
        )
    assert result["success"] is True, result
    data = result["data"]
    assert data["approved"] is False
    assert data["comments"] == REVIEW["comments"]
    assert data["metrics"]["risk"] == "high"
    assert data["summary"] == "not approved: 1 error"
    assert result["suggestions"] == [
        "calc.py:2 [error] add subtracts. — suggested:     return a + b"
    ]
    (request,) = scripted.requests
    prompt = json.dumps(request["messages"])
    assert "return a - b" in prompt and "no subtraction in add" in prompt
    assert "correctness" in prompt
    assert json.loads(Path(data["run_log"]).read_text())["status"] == "completed"
    assert "reviewing calc.py" in progress
    # Nothing was changed by the review.
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


async def test_review_code_of_a_given_diff_and_of_nothing(
    repo: Path, scripted: ScriptedModel
) -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    scripted.script = [{"content": json.dumps({"approved": True, "comments": []})}]
    scripted.fallback = {"content": "Looks fine to me."}
    async with _client(repo, scripted) as client:
        given = await _call(client, "review_code", diff=diff)
        nothing = await _call(client, "review_code")
        unreadable = await _call(client, "review_code", diff=diff)
    assert given["success"] is True and given["data"]["approved"] is True
    assert "a = 2" in json.dumps(scripted.requests[0]["messages"])
    assert nothing["success"] is False
    assert nothing["error"] == "nothing to review: the working tree has no changes against HEAD"
    assert unreadable["success"] is False and unreadable["error"].startswith("no review: ")
    run_log = repo / ".toolgate" / "runs" / f"{unreadable['data']['run_id']}.json"
    assert json.loads(run_log.read_text())["status"] == "failed"


async def test_a_test_command_off_the_allow_list_is_asked_for(repo: Path) -> None:
    _project(repo)
    _user_config('[policy]\nallowed_commands = ["python -m pytest"]\n')
    seen: list[types.ElicitRequestParams] = []
    answer = types.ElicitResult(action="accept", content={"approve": True})
    async with _client(repo, None, elicitation=_elicitation(answer, seen)) as client:
        asked = await _call(client, "run_tests", test_commands=["pytest -q"])
    async with _client(repo, None) as client:
        refused = await _call(client, "run_tests", test_commands=["pytest -q"])
        allowed = await _call(client, "run_tests", test_commands=["python -m pytest -q"])
    (question,) = seen
    assert question.message.startswith("Toolgate: allow run_tests?")
    assert "pytest -q" in question.message
    assert asked["success"] is True and asked["data"]["passed"] == 2
    assert refused["success"] is False and "allow-list" in refused["error"]
    assert any("explicit yes" in s for s in refused["suggestions"])
    assert allowed["success"] is True


async def test_questions_across_round_trips_reach_the_same_run(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        _calls(
            ("write_file", {"path": "a.txt", "content": "a\n"}),
            ("write_file", {"path": "b.txt", "content": "b\n"}),
        ),
        {"content": "Wrote a.txt; b.txt was refused."},
    ]
    seen: list[str] = []

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params.message.splitlines()[0])
        if "a.txt" in params.message:
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    progress: list[str] = []
    # 2026-07-28: each question is an InputRequiredResult; each retry carries one answer.
    async with _client(repo, scripted, elicitation=callback, mode="auto") as client:
        result = await _call(client, "implement_code", progress, task_description="a and b")
    assert seen == ["Toolgate: Create a.txt?", "Toolgate: Create b.txt?"]
    assert (repo / "a.txt").read_text() == "a\n" and not (repo / "b.txt").exists()
    assert result["data"]["status"] == "incomplete"
    assert [f["path"] for f in result["data"]["files_changed"]] == ["a.txt"]
    assert any("the person chose decline" in s for s in result["suggestions"])
    # One run took both answers, and its progress came out over the rounds.
    assert len(list((repo / ".toolgate" / "runs").glob("r-*.json"))) == 1
    assert progress[0].startswith("run r-") and progress[-1].endswith(" incomplete")
