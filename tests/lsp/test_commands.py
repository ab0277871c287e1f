"""Malformed commands get JSON-RPC errors with clear messages, and the server keeps serving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

ORIGINAL = "".join(f"line {i}\n" for i in range(30))


async def _error(editor: Editor, name: str, *args: Any) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await editor.command(name, *args)
    return str(caught.value)


async def test_bad_arguments_without_a_run(editor: Editor, repo: Path, tmp_path: Path) -> None:
    assert "toolgate.ask takes one object argument" in await _error(
        editor, "toolgate.ask", "just a string"
    )
    assert 'toolgate.ask needs [{"task": "…"}]' in await _error(editor, "toolgate.ask", {})
    # An empty list is an empty object (Lua clients cannot tell them apart), not a bad shape.
    assert 'toolgate.ask needs [{"task": "…"}]' in await _error(editor, "toolgate.ask", [])
    assert 'toolgate.ask needs [{"task": "…"}]' in await _error(
        editor, "toolgate.ask", {"task": "   "}
    )
    outside = {"task": "look", "context": {"uri": uri_of(tmp_path / "elsewhere.py")}}
    assert "context uri is outside the workspace" in await _error(editor, "toolgate.ask", outside)
    assert "no pending proposal with id 'p-nope'" in await _error(
        editor, "toolgate.acceptProposal", "p-nope"
    )
    assert "proposal id must be a non-empty string" in await _error(
        editor, "toolgate.acceptProposal", 42
    )
    assert "proposal id must be a non-empty string" in await _error(
        editor, "toolgate.rejectProposal"
    )
    assert "no pending proposal with id 'p-nope'" in await _error(
        editor, "toolgate.rejectProposal", "p-nope", "why not"
    )
    assert "no active run with id 'r-nope'" in await _error(editor, "toolgate.cancel", "r-nope")
    assert "uri is outside the workspace" in await _error(
        editor, "toolgate.fixFailure", {"uri": uri_of(tmp_path / "t.py"), "line": 1}
    )
    assert "toolgate.runTests takes one object argument" in await _error(
        editor, "toolgate.runTests", ["pytest"]
    )
    assert "command must be a string" in await _error(editor, "toolgate.runTests", {"command": 3})
    assert "is not on the allow-list" in await _error(
        editor, "toolgate.runTests", {"command": "rm -rf ."}
    )
    assert 'needs [{"uri", "diagnostics": []}]' in await _error(
        editor, "toolgate.reportDiagnostics", {"uri": 5}
    )
    assert "toolgate.nope" in await _error(editor, "toolgate.nope")
    # Still serving: a plain request and a command answer.
    assert await editor.command("toolgate.listProposals") == []
    assert await editor.command("toolgate.cancel") == {"cancelled": False}
    assert (repo / "README.md").read_text() == "# Tiny project\n"


async def test_bad_arguments_during_a_run(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "a.py").write_text(ORIGINAL)
    new = ORIGINAL.replace("line 2\n", "LINE 2\n").replace("line 25\n", "LINE 25\n")
    scripted.script = [tool_call("write_file", path="a.py", content=new), {"content": "done"}]
    reply = await editor.command("toolgate.ask", {"task": "shout"})
    proposal = await editor.proposal()
    pid = proposal["id"]
    message = await _error(editor, "toolgate.ask", {"task": "another one"})
    assert f"a run is already active ({reply['runId']})" in message
    assert f"proposal {pid} has hunks 0..1; no hunk 2" in await _error(
        editor, "toolgate.acceptProposal", pid, [2]
    )
    assert "no hunk -1" in await _error(editor, "toolgate.acceptProposal", pid, [0, -1])
    assert "hunk indexes must be a list of integers" in await _error(
        editor, "toolgate.acceptProposal", pid, ["0"]
    )
    assert "hunk indexes must be a list of integers" in await _error(
        editor, "toolgate.acceptProposal", pid, 0
    )
    assert "accept at least one hunk, or reject the proposal" in await _error(
        editor, "toolgate.acceptProposal", pid, []
    )
    assert "the reason must be a string" in await _error(
        editor, "toolgate.rejectProposal", pid, {"why": "no"}
    )
    # None of that touched the proposal: it is still pending and can be accepted.
    assert editor.edits == [] and not editor.resolved
    listed = await editor.command("toolgate.listProposals")
    assert [p["id"] for p in listed] == [pid]
    result = await editor.command("toolgate.acceptProposal", pid, [0])
    assert result["status"] == "partially_accepted" and result["hunksApplied"] == [0]
    assert (await editor.finished())["status"] == "completed"
    assert (repo / "a.py").read_text() == ORIGINAL.replace("line 2\n", "LINE 2\n")
    told = last_tool_result(scripted.requests[-1])
    assert told["data"]["hunks_applied"] == [0]
    assert "no pending proposal" in await _error(editor, "toolgate.acceptProposal", pid)
