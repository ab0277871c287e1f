"""`toolgate.rewind` and `toolgate.undoRewind` over real stdio.

The files come back through `workspace/applyEdit`, as an undo's do; the session a client loads
shows the later turns as rewound, and the next turn's request leaves them out.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, tool_call


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


async def _turn(editor: Editor, scripted: ScriptedModel, task: str, call: dict[str, Any]) -> str:
    """One turn whose one change is accepted; its session."""
    scripted.script = [call, {"content": f"Done: {task}"}]
    pending = len([p for p in editor.proposals if p["status"] == "pending"])
    asked = await _once_idle(editor, "toolgate.ask", {"task": task})
    proposal = await editor.proposal(pending + 1)
    await editor.command("toolgate.acceptProposal", proposal["id"])
    assert (await _ended(editor, asked["runId"]))["status"] == "completed"
    return str(asked["sessionId"])


async def _once_idle(editor: Editor, command: str, arguments: dict[str, Any]) -> Any:
    """`command`, sent again while the run that just announced its end is still closing."""
    for _ in range(100):
        try:
            return await editor.command(command, arguments)
        except JsonRpcException as exc:
            if "a run is" not in str(exc):
                raise
            await asyncio.sleep(0.05)
    raise AssertionError(f"{command}: the server never became idle")


async def test_rewind_through_the_editor_and_back(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    readme = uri_of(repo / "README.md")
    editor.open("README.md")
    session = await _turn(
        editor,
        scripted,
        "Rename it.",
        tool_call("edit_file", path="README.md", search="Tiny", replace="Small"),
    )
    await _turn(
        editor,
        scripted,
        "Say more.",
        tool_call("edit_file", path="README.md", search="project", replace="app"),
    )
    assert editor.text(readme) == "# Small app\n"

    edits = len(editor.edits)
    done = await _once_idle(editor, "toolgate.rewind", {"turn": 1, "sessionId": session})
    assert done["turns"] == [2] and len(done["undos"]) == 1 and done["leftAlone"] == []
    assert len(editor.edits) == edits + 1  # the restore came as an edit the editor applied
    assert editor.text(readme) == "# Small project\n"
    assert (repo / "README.md").read_text() == "# Small project\n"

    loaded = await editor.command("toolgate.loadSession", {"sessionId": session})
    users = [e for e in loaded["transcript"] if e["kind"] == "user"]
    assert [(u["text"], bool(u.get("rewound"))) for u in users] == [
        ("Rename it.", False),
        ("Say more.", True),
    ]
    rewinds = [e for e in loaded["transcript"] if e["kind"] == "rewind"]
    assert [r["rewindId"] for r in rewinds] == [done["rewindId"]]
    listed = await editor.command("toolgate.listSessions", {})
    entry = next(s for s in listed["sessions"] if s["id"] == session)
    assert entry["turns"] == 2 and entry["rewound"] == 1

    back = await editor.command("toolgate.undoRewind", {"sessionId": session})
    assert back["rewindId"] == done["rewindId"] and back["takenBack"]
    assert editor.text(readme) == "# Small app\n"
    scripted.script = [{"content": "Noted."}]
    before = len(scripted.requests)
    asked = await _once_idle(editor, "toolgate.ask", {"task": "What now?", "sessionId": session})
    assert (await _ended(editor, asked["runId"]))["status"] == "completed"
    assert "Say more." in json.dumps(scripted.requests[before]["messages"])


async def test_a_rewind_that_cannot_be_done_is_an_invalid_params_error(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    session = await _turn(
        editor,
        scripted,
        "Rename it.",
        tool_call("edit_file", path="README.md", search="Tiny", replace="Small"),
    )
    with pytest.raises(JsonRpcException, match="last turn"):
        await _once_idle(editor, "toolgate.rewind", {"turn": 1, "sessionId": session})
    for arguments, said in (
        ({"turn": 0, "what": "conversation", "sessionId": "s-nope"}, "unknown session"),
        ({"turn": 1, "what": "files"}, "what must be"),
        ({"turn": "1"}, "turn must be an integer"),
        ({}, "needs"),
    ):
        with pytest.raises(JsonRpcException, match=said) as caught:
            await editor.command("toolgate.rewind", arguments)
        assert caught.value.code == -32602
    with pytest.raises(JsonRpcException, match="no rewind to take back"):
        await editor.command("toolgate.undoRewind", {"sessionId": session})
    assert (repo / "README.md").read_text() == "# Small project\n"
