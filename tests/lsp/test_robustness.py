"""A failing tool call ends neither the run nor the server; the server also serves over TCP."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call


async def test_a_tool_that_cannot_run_is_a_result_not_a_crash(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    # A lone surrogate survives JSON decoding but cannot be encoded as UTF-8: the call is
    # refused with a clear error the model reads, and the run and the server go on.
    scripted.script = [
        tool_call("write_file", path="s.py", content="x = '\ud800'\n"),
        {"content": "understood"},
    ]
    first = (await editor.command("toolgate.ask", {"task": "write odd text"}))["runId"]
    finished = await editor.finished()
    assert finished["runId"] == first
    assert finished["status"] == "incomplete"  # the write it asked for never landed
    assert not (repo / "s.py").exists()
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is False and "UTF-8" in told["error"]
    # The server still answers, and announced the end of the run exactly once.
    assert await editor.command("toolgate.listProposals") == []
    assert [e["runId"] for e in editor.events if e["type"] == "run_finished"] == [first]
    scripted.script = [{"content": "hello"}]
    editor.events.clear()
    second = (await editor.command("toolgate.ask", {"task": "say hello"}))["runId"]
    finished = await editor.finished()
    assert finished["runId"] == second != first
    assert finished["status"] == "completed" and finished["answer"] == "hello"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _frame(payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


async def _read_message(reader: asyncio.StreamReader) -> dict[str, object]:
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(await reader.readexactly(length))


async def _response(reader: asyncio.StreamReader, msg_id: int) -> dict[str, object]:
    while True:
        message = await _read_message(reader)
        if message.get("id") == msg_id and "method" not in message:
            return message


async def test_serves_over_tcp(repo: Path) -> None:
    port = _free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "toolgate",
        "lsp",
        "--tcp",
        f"127.0.0.1:{port}",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                assert server.returncode is None, "the server exited"
                assert asyncio.get_running_loop().time() < deadline, "server never listened"
                await asyncio.sleep(0.05)
        init = {
            "processId": None,
            "rootUri": uri_of(repo),
            "capabilities": {},
            "workspaceFolders": [{"uri": uri_of(repo), "name": "project"}],
        }
        writer.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        await writer.drain()
        reply = await asyncio.wait_for(_response(reader, 1), 30)
        result = reply["result"]
        assert isinstance(result, dict)
        assert result["serverInfo"]["name"] == "toolgate"
        assert "toolgate.ask" in result["capabilities"]["executeCommandProvider"]["commands"]
        writer.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        command = {"command": "toolgate.listProposals", "arguments": []}
        writer.write(
            _frame(
                {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": command}
            )
        )
        await writer.drain()
        assert (await asyncio.wait_for(_response(reader, 2), 30))["result"] == []
        writer.write(_frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
        await writer.drain()
        assert "error" not in await asyncio.wait_for(_response(reader, 3), 30)
        writer.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        await writer.drain()
        writer.close()
        assert await asyncio.wait_for(server.wait(), 30) == 0
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
