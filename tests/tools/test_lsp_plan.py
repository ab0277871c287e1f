"""`toolgate.plan` and `toolgate.scaffoldTool` over real stdio, against the scripted model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from tests.lsp.conftest import API_KEY, start_editor
from tests.lsp.harness import Editor
from tests.support.plans import PARTIAL_PLAN
from tests.support.scripted_model import ScriptedModel
from tests.tools.helpers import manifest, write_tool

from toolgate.tools.yaml_manifest import read_manifest
from toolgate.trust import TrustStore


@pytest_asyncio.fixture
async def lsp_editor(repo: Path, scripted: ScriptedModel) -> AsyncIterator[Editor]:
    options = {"baseUrl": scripted.base_url, "model": scripted.model, "apiKey": API_KEY}
    editor = await start_editor(repo, options, "visual-studio-code")
    yield editor
    await editor.client.shutdown_session()


async def test_plan_command_reports_gaps_and_scaffolds_the_missing_tool(
    lsp_editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    notes: list[Any] = []
    lsp_editor.client.feature("toolgate/plan")(lambda params: notes.append(params))
    scripted.script = [{"content": json.dumps(PARTIAL_PLAN)}]
    reply = await lsp_editor.command("toolgate.plan", {"task": "publish the README"})
    assert reply["status"] == "partial"
    assert [s["tool"] for s in reply["steps"]] == ["read_file", None]
    (gap,) = reply["gaps"]
    assert gap["reason"] == "no_capability_match"
    await lsp_editor.until(lambda: bool(notes))
    assert notes[0].planId == reply["planId"] and notes[0].status == "partial"
    assert notes[0].gaps[0].missing_capability == "docs.render"
    assert gap["scaffold"]["command"] == "toolgate.scaffoldTool"
    # The kept plan, opened in the editor, offers to scaffold the missing tool.
    actions = await lsp_editor.code_actions(reply["uri"])
    (action,) = [a for a in actions if a["title"].startswith("Scaffold missing tool")]
    assert action["title"] == "Scaffold missing tool docs_render (docs.render)"
    command = action["command"]
    made = await lsp_editor.command(command["command"], *command["arguments"])
    assert made["name"] == "docs_render"
    assert (repo / "tools" / "docs_render" / "tool.yaml").is_file()
    # The scaffolded tool fills the gap: the same plan is now ready.
    scripted.script = [{"content": json.dumps(PARTIAL_PLAN)}]
    again = await lsp_editor.command("toolgate.plan", {"task": "publish the README"})
    assert again["status"] == "ready" and again["gaps"] == []
    titles = [a["title"] for a in await lsp_editor.code_actions(again["uri"])]
    assert titles == ["Run this plan"]
    assert API_KEY not in json.dumps(again)


async def test_run_plan_runs_a_ready_plan_through_the_gate(
    lsp_editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    plan = {
        "goal": "look around",
        "steps": [
            {"step_id": "read", "capability": "fs.read", "inputs": {"path": "README.md"}},
            {
                "step_id": "find",
                "capability": "code.search",
                "inputs": {"pattern": "Tiny"},
                "on_failure": "skip",
            },
            {
                "step_id": "shout",
                "capability": "text.shout",
                "inputs": {"text": "${steps.read.output.content}"},
            },
        ],
    }
    path = write_tool(repo, manifest())
    TrustStore().confirm(repo, [read_manifest(path).fingerprint])
    scripted.script = [{"content": json.dumps(plan)}]
    reply = await lsp_editor.command("toolgate.plan", {"task": "look around"})
    assert reply["status"] == "ready"
    started = await lsp_editor.command("toolgate.runPlan", {"planId": reply["planId"]})
    finished = await lsp_editor.finished()
    assert finished["runId"] == started["runId"]
    assert finished["status"] == "completed"
    assert finished["done"] == ["read fs.read", "find code.search", "shout text.shout"]
    calls = [e for e in lsp_editor.events if e["type"] == "tool_result"]
    assert [c["tool"] for c in calls] == ["read_file", "search_code", "shout"]
    progress = [e for e in lsp_editor.events if e["type"] == "tool_progress"]
    assert [(e["tool"], e["line"], e["runId"]) for e in progress] == [
        ("shout", "echo: got ['text']", started["runId"])
    ]


async def test_run_plan_refuses_a_partial_plan(lsp_editor: Editor, scripted: ScriptedModel) -> None:
    from pygls.exceptions import JsonRpcException

    scripted.script = [{"content": json.dumps(PARTIAL_PLAN)}]
    reply = await lsp_editor.command("toolgate.plan", {"task": "publish the README"})
    try:
        await lsp_editor.command("toolgate.runPlan", {"planId": reply["planId"]})
    except JsonRpcException as exc:
        assert "partial and does not run: missing docs.render" in str(exc)
    else:
        raise AssertionError("a partial plan ran")


async def test_run_workflow_runs_a_saved_workflow_with_its_inputs(
    lsp_editor: Editor, repo: Path
) -> None:
    import yaml

    path = write_tool(repo, manifest())
    TrustStore().confirm(repo, [read_manifest(path).fingerprint])
    workflow = {
        "name": "shout-file",
        "inputs": {"file": {"type": "string"}},
        "steps": [
            {"step_id": "read", "capability": "fs.read", "inputs": {"path": "${inputs.file}"}},
            {
                "step_id": "shout",
                "capability": "text.shout",
                "inputs": {"text": "${steps.read.output.content}"},
            },
        ],
    }
    folder = repo / ".agent" / "workflows"
    folder.mkdir(parents=True)
    (folder / "shout-file.yaml").write_text(yaml.safe_dump(workflow))
    started = await lsp_editor.command(
        "toolgate.runWorkflow", {"name": "shout-file", "inputs": {"file": "README.md"}}
    )
    finished = await lsp_editor.finished()
    assert finished["runId"] == started["runId"] and finished["status"] == "completed"
    assert finished["done"] == ["read fs.read", "shout text.shout"]
    (log,) = (repo / ".toolgate" / "runs").glob("w-*.json")
    calls = [c for step in json.loads(log.read_text())["steps"] for c in step["calls"]]
    assert calls[1]["result"]["data"] == {"text": "# TINY PROJECT\n", "length": 15}


async def test_a_cancelled_workflow_ends_with_its_account(lsp_editor: Editor, repo: Path) -> None:
    import yaml

    slow = "import sys, time\nprint('slow: started', file=sys.stderr, flush=True)\ntime.sleep(60)\n"
    path = write_tool(repo, manifest("slow", timeout_seconds=120), slow)
    TrustStore().confirm(repo, [read_manifest(path).fingerprint])
    workflow = {
        "name": "slow",
        "steps": [{"step_id": "wait", "capability": "text.shout", "inputs": {"text": "x"}}],
    }
    (repo / ".agent" / "workflows").mkdir(parents=True)
    (repo / ".agent" / "workflows" / "slow.yaml").write_text(yaml.safe_dump(workflow))
    started = await lsp_editor.command("toolgate.runWorkflow", {"name": "slow"})
    await lsp_editor.until(lambda: any(e["type"] == "tool_progress" for e in lsp_editor.events))
    assert await lsp_editor.command("toolgate.cancel", started["runId"]) == {"cancelled": True}
    finished = await lsp_editor.finished()
    assert finished["status"] == "cancelled" and finished["missing"] == ["wait text.shout"]


async def test_a_step_that_names_no_capability_offers_nothing_to_scaffold(
    lsp_editor: Editor, scripted: ScriptedModel
) -> None:
    # Small models write the word "tool" where a capability belongs: no new tool fills that.
    plan = json.loads(json.dumps(PARTIAL_PLAN))
    plan["steps"][1]["capability"] = "tool"
    scripted.script = [{"content": json.dumps(plan)}]
    reply = await lsp_editor.command("toolgate.plan", {"task": "publish the README"})
    (gap,) = reply["gaps"]
    assert gap["reason"] == "invalid_capability"
    assert "scaffold" not in gap
    titles = [a["title"] for a in await lsp_editor.code_actions(reply["uri"])]
    assert not any(t.startswith("Scaffold") for t in titles), titles
    assert "Run this plan" not in titles  # a plan with a gap does not run


async def test_plan_reads_the_context_the_person_pointed_at(
    lsp_editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    """`@path` and `@selection` reach the planning model as they reach a run's."""
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    scripted.script = [{"content": json.dumps(PARTIAL_PLAN)}]
    selection = {
        "uri": (repo / "calc.py").as_uri(),
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
        "text": "    return a - b\n",
    }
    reply = await lsp_editor.command(
        "toolgate.plan",
        {"task": "publish @README.md and explain @selection", "context": selection},
    )
    (request,) = scripted.requests
    asked = request["messages"][-1]["content"]
    assert '<context mention="@README.md" kind="file"' in asked and "# Tiny project" in asked
    assert '<context mention="@selection"' in asked and "return a - b" in asked
    assert asked.endswith("publish @README.md and explain @selection")
    # What was attached is for the model's request only: the kept plan does not carry it.
    kept = Path(reply["uri"].removeprefix("file://")).read_text()
    assert "<context" not in kept and reply["goal"] == PARTIAL_PLAN["goal"]
