"""Cancelling a run (by command, from the editor's progress UI) or a command's request.

Nothing is left half-applied, and what was started stops.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled
from tests.lsp.harness import Editor
from tests.support.processes import alive, assert_stopped, slow_test
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.config import user_config_path

ORIGINAL = "".join(f"line {i}\n" for i in range(30))


async def _pending(editor: Editor, scripted: ScriptedModel, repo: Path) -> tuple[str, str]:
    (repo / "a.py").write_text(ORIGINAL)
    scripted.script = [
        tool_call("edit_file", path="a.py", search="line 3\n", replace="LINE 3\n"),
        {"content": "should never be asked"},
    ]
    reply = await editor.command("toolgate.ask", {"task": "shout line 3"})
    proposal = await editor.proposal()
    return reply["runId"], proposal["id"]


async def test_cancel_command_resolves_pending_proposal(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    run_id, proposal_id = await _pending(editor, scripted, repo)
    assert await editor.command("toolgate.cancel", run_id) == {"cancelled": True}
    finished = await editor.finished()
    assert finished["runId"] == run_id
    assert finished["status"] == "cancelled"
    resolved = [r for r in editor.resolved if r["id"] == proposal_id]
    assert [r["status"] for r in resolved] == ["cancelled"]
    assert editor.edits == []
    assert (repo / "a.py").read_text() == ORIGINAL
    assert len(scripted.requests) == 1  # the model was not asked again
    # The proposal is gone: its code actions and commands no longer exist.
    assert await editor.command("toolgate.listProposals") == []
    assert await editor.command("toolgate.cancel") == {"cancelled": False}
    # And a new run can start.
    scripted.script = [{"content": "hello again"}]
    editor.events.clear()
    await editor.command("toolgate.ask", {"task": "say hello"})
    assert (await editor.finished())["status"] == "completed"


async def test_progress_cancel_cancels_the_run(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    run_id, proposal_id = await _pending(editor, scripted, repo)
    reports = editor.client.progress_reports
    tokens = [t for t, values in reports.items() if values]
    assert len(tokens) == 1
    token = tokens[0]
    begin = reports[token][0]
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.title == "Toolgate" and begin.cancellable is True
    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    finished = await editor.finished()
    assert finished["runId"] == run_id and finished["status"] == "cancelled"
    assert [r["status"] for r in editor.resolved if r["id"] == proposal_id] == ["cancelled"]
    assert (repo / "a.py").read_text() == ORIGINAL
    await editor.until(
        lambda: isinstance(reports[token][-1], types.WorkDoneProgressEnd), timeout=10
    )


async def test_the_server_keeps_serving_while_an_mcp_server_starts_and_cancel_stops_it(
    editor: Editor, scripted: ScriptedModel, tmp_path: Path
) -> None:
    # A run before, so that the cancel below must reach the run being set up, not that one.
    scripted.script = [{"content": "hello"}]
    await editor.command("toolgate.ask", {"task": "say hello"})
    assert (await editor.finished())["status"] == "completed"

    marker = tmp_path / "pids.txt"
    stuck = Path(__file__).with_name("stuck_mcp_server.py")
    config = user_config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f"[mcp.servers.stuck]\ncommand = {json.dumps([sys.executable, str(stuck), str(marker)])}\n"
    )
    scripted.script = [{"content": "never reached"}]
    reply = await editor.command("toolgate.ask", {"task": "use the stuck server"})
    await editor.until(lambda: marker.exists() and marker.read_text().strip() != "")
    # The run is being set up (its MCP server does not answer); the editor is still served.
    assert await editor.command("toolgate.listProposals") == []
    with pytest.raises(JsonRpcException, match="a run is already active"):
        await editor.command("toolgate.ask", {"task": "a second one"})

    assert await editor.command("toolgate.cancel") == {"cancelled": True}
    await editor.until(lambda: len(_finished(editor)) == 2)
    assert _finished(editor)[1]["runId"] == reply["runId"]
    assert _finished(editor)[1]["status"] == "cancelled"
    assert len(scripted.requests) == 1  # only the first run asked the model
    (pid,) = [int(line) for line in marker.read_text().split()]
    await editor.until(lambda: not alive(pid))  # the server was stopped with the setup


def _finished(editor: Editor) -> list[dict[str, object]]:
    return [e for e in editor.events if e["type"] == "run_finished"]


async def test_a_withdrawn_test_run_stops_pytest(editor: Editor, repo: Path) -> None:
    """`$/cancelRequest` on `toolgate.runTests` ends the pytest it started."""
    beats = slow_test(repo)
    protocol = editor.client.protocol
    params = types.ExecuteCommandParams(command="toolgate.runTests", arguments=[{}])
    answer = asyncio.wrap_future(
        protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id="tests-1")
    )
    await editor.until(beats.exists, timeout=60)
    protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="tests-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await answer
    await assert_stopped(beats)
