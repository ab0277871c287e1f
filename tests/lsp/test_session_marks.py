"""Plans and finished runs come back with the conversation a client loads (real stdio).

A client that reloads (VS Code's Reload Window restarts the server too) draws the session from
`toolgate.loadSession` alone: plan cards with what became of them, each run's end, the undo of
a run and the undo of that undo, in the order they happened, with the undo state of the disk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.lsp.harness import Editor
from tests.support.plans import PARTIAL_PLAN
from tests.support.scripted_model import ScriptedModel, tool_call

READY_PLAN = {
    "goal": "Look around",
    "steps": [
        {"step_id": "read", "capability": "fs.read", "inputs": {"path": "README.md"}},
        {"step_id": "find", "capability": "code.search", "inputs": {"pattern": "Tiny"}},
    ],
}


async def _ended(editor: Editor, run_id: str) -> dict[str, Any]:
    def end() -> dict[str, Any] | None:
        return next(
            (e for e in editor.events if e["type"] == "run_finished" and e["runId"] == run_id),
            None,
        )

    await editor.until(lambda: end() is not None, 60)
    found = end()
    assert found is not None
    return found


async def _accepted_edit(editor: Editor, scripted: ScriptedModel) -> dict[str, Any]:
    """A run that changes README.md, its change accepted, ended `completed`: its answer."""
    scripted.script = [
        tool_call("edit_file", path="README.md", search="Tiny", replace="Small"),
        {"content": "Done."},
    ]
    asked = await editor.command("toolgate.ask", {"task": "make it small"})
    proposal = await editor.proposal(1)
    await editor.command("toolgate.acceptProposal", proposal["id"])
    assert (await _ended(editor, asked["runId"]))["status"] == "completed"
    return asked


def _kinds(transcript: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in transcript if e["kind"] in ("plan", "run", "user")]


async def test_plans_and_finished_runs_come_back_with_the_session(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    asked = await _accepted_edit(editor, scripted)  # a run that changes a file
    session = asked["sessionId"]

    # A partial plan: its gap scaffolded from the card, then dropped.
    scripted.script = [{"content": json.dumps(PARTIAL_PLAN)}]
    partial = await editor.command("toolgate.plan", {"task": "publish", "sessionId": session})
    assert partial["sessionId"] == session and partial["status"] == "partial"
    gap_args = partial["gaps"][0]["scaffold"]["arguments"][0]
    await editor.command(
        "toolgate.scaffoldTool",
        {**gap_args, "planId": partial["planId"], "stepId": "render", "sessionId": session},
    )
    await editor.command("toolgate.dropPlan", {"planId": partial["planId"], "sessionId": session})

    # A ready plan, approved: it runs, and its events name the plan's session.
    scripted.script = [{"content": json.dumps(READY_PLAN)}]
    ready = await editor.command("toolgate.plan", {"task": "look", "sessionId": session})
    started = await editor.command(
        "toolgate.runPlan", {"planId": ready["planId"], "sessionId": session}
    )
    plan_end = await _ended(editor, started["runId"])
    assert plan_end["status"] == "completed" and plan_end["sessionId"] == session

    # Another conversation is loaded in between, as a client switching sessions would.
    other = await editor.command("toolgate.newSession", {})
    await editor.command("toolgate.loadSession", {"sessionId": other["sessionId"]})

    loaded = await editor.command("toolgate.loadSession", {"sessionId": session})
    transcript = loaded["transcript"]
    assert _kinds(transcript) == ["user", "run", "plan", "plan", "run"]
    runs = [e for e in transcript if e["kind"] == "run"]
    plans = [e for e in transcript if e["kind"] == "plan"]

    assert runs[0]["runId"] == asked["runId"] and runs[0]["status"] == "completed"
    assert runs[0]["files"] == ["README.md"] and runs[0]["undo"] == "available"
    assert runs[1]["runId"] == started["runId"] and runs[1]["status"] == "completed"
    assert runs[1]["undo"] == "none"  # the plan only read: nothing to undo

    assert plans[0]["plan"]["planId"] == partial["planId"]
    assert plans[0]["plan"]["gaps"][0]["missing_capability"] == "docs.render"
    assert plans[0]["decision"] == "dropped"
    assert plans[0]["scaffolded"] == {
        "render": {"tool": "docs_render", "folder": "tools/docs_render"}
    }
    assert plans[1]["plan"]["planId"] == ready["planId"]
    assert plans[1]["decision"] == "approved" and plans[1]["runId"] == started["runId"]
    assert plans[1]["scaffolded"] == {}


async def test_an_undo_and_its_undo_come_back_as_runs_that_can_be_undone(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    asked = await _accepted_edit(editor, scripted)
    session = asked["sessionId"]
    assert (repo / "README.md").read_text() == "# Small project\n"

    undo = await editor.command("toolgate.undoRun", {"runId": asked["runId"], "sessionId": session})
    assert (repo / "README.md").read_text() == "# Tiny project\n"
    loaded = await editor.command("toolgate.loadSession", {"sessionId": session})
    runs = [e for e in loaded["transcript"] if e["kind"] == "run"]
    assert [(r["runId"], r["undo"]) for r in runs] == [
        (asked["runId"], "undone"),
        (undo["undoRunId"], "available"),
    ]
    assert runs[0]["undoneBy"] == undo["undoRunId"]
    assert runs[1]["undoes"] == asked["runId"] and runs[1]["files"] == ["README.md"]

    # The undo of the undo: the run's change is back, and the run can be undone again.
    redo = await editor.command(
        "toolgate.undoRun", {"runId": undo["undoRunId"], "sessionId": session}
    )
    assert (repo / "README.md").read_text() == "# Small project\n"
    loaded = await editor.command("toolgate.loadSession", {"sessionId": session})
    runs = [e for e in loaded["transcript"] if e["kind"] == "run"]
    assert [(r["runId"], r["undo"]) for r in runs] == [
        (asked["runId"], "available"),
        (undo["undoRunId"], "undone"),
        (redo["undoRunId"], "available"),
    ]
    assert runs[2]["undoes"] == undo["undoRunId"]
