"""A turn after an undo tells the model which of its changes were undone, or brought back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.helpers import toolgate, toolgate_task
from tests.support.scripted_model import ScriptedModel, tool_call


def _turn(repo: Path, scripted: ScriptedModel, task: str, *extra: str) -> str:
    """Run one turn; what the terminal showed the person."""
    done = toolgate_task("run", task, repo, scripted, "--approve", "auto", *extra)
    assert done.returncode == 0, done.stderr
    return done.stderr


def _undo(repo: Path, *extra: str) -> dict[str, Any]:
    done = toolgate("undo", "--workspace", str(repo), "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _asked(scripted: ScriptedModel) -> str:
    """What the latest request's last message, the person's, said to the model."""
    message = scripted.requests[-1]["messages"][-1]
    assert message["role"] == "user"
    return str(message["content"])


def test_the_model_hears_of_an_undo_from_another_terminal_and_of_its_redo(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("edit_file", path="README.md", search="Tiny", replace="Small"),
        {"content": "Renamed it."},
        {"content": "I renamed the project."},
        {"content": "It is Tiny again."},
        {"content": "Still Tiny."},
        {"content": "Small again."},
    ]
    _turn(repo, scripted, "Rename the project to Small.")
    shown = _turn(repo, scripted, "What did you change?", "--continue")
    assert _asked(scripted) == "What did you change?"  # nothing undone: nothing to tell
    assert "told the model" not in shown

    undone = _undo(repo)
    run_id = undone["runId"]
    assert (repo / "README.md").read_text() == "# Tiny project\n"
    shown = _turn(repo, scripted, "Where are we now?", "--continue")
    assert f"told the model: turn 1's changes (run {run_id}) were undone" in shown
    asked = _asked(scripted)
    assert asked.startswith("[Since your last answer]\n")
    assert f"the person undid the changes of turn 1 (run {run_id}); " in asked
    assert "as they were before it: README.md\n" in asked
    assert asked.endswith("\n\nWhere are we now?")

    _turn(repo, scripted, "And now?", "--continue")
    assert _asked(scripted) == "And now?"  # told once

    redone = _undo(repo, undone["undoRunId"])  # the undo undone: the rename is back
    assert (repo / "README.md").read_text() == "# Small project\n"
    shown = _turn(repo, scripted, "Once more?", "--continue")
    assert f"told the model: turn 1's changes (run {run_id}) are back" in shown
    asked = _asked(scripted)
    assert f"the person brought back the changes of turn 1 (run {run_id})" in asked
    assert "undid" not in asked
    assert asked.endswith("\n\nOnce more?")

    # What the person said is kept as they said it; only the model reads the note.
    listed = toolgate("sessions", "--workspace", str(repo), "--json")
    session_id = json.loads(listed.stdout)[0]["id"]
    shown = toolgate("sessions", "show", session_id, "--workspace", str(repo), "--json")
    assert shown.returncode == 0, shown.stderr
    transcript = json.loads(shown.stdout)["transcript"]
    said = [e["text"] for e in transcript if e["kind"] == "user"]
    assert said == [
        "Rename the project to Small.",
        "What did you change?",
        "Where are we now?",
        "And now?",
        "Once more?",
    ]
    # Both undos, made in a terminal, are kept in the session of the run they undid, in order.
    assert undone["sessionId"] == redone["sessionId"] == session_id
    runs = [(e["runId"], e.get("undoes")) for e in transcript if e["kind"] == "run"]
    assert (undone["undoRunId"], run_id) in runs
    assert (redone["undoRunId"], undone["undoRunId"]) in runs
    kinds = [e["kind"] for e in transcript]
    assert runs.index((undone["undoRunId"], run_id)) == 2  # after turns 1 and 2's runs
    assert kinds.count("run") == 7
