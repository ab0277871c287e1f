"""`toolgate acp` given bad input over raw stdio: every request answered, nothing else on stdout."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.acp.client import agent_env
from tests.cli.helpers import WITHOUT_LOCAL_RUNTIME
from tests.support.jsonrpc import shape_problem
from tests.support.scripted_model import ScriptedModel, tool_call

pytestmark = pytest.mark.asyncio


class RawClient:
    """Writes lines to `toolgate acp` and reads every line it prints."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[dict[str, Any]] = []

    async def send(self, data: bytes | dict[str, Any]) -> None:
        if isinstance(data, dict):
            data = json.dumps(data).encode() + b"\n"
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def next(self, timeout: float = 60) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        assert line, "toolgate acp closed stdout"
        message = json.loads(line)  # stdout carries nothing but protocol
        assert shape_problem(message) is None, (shape_problem(message), message)
        self.lines.append(message)
        return message

    async def answer(self, request_id: Any) -> dict[str, Any]:
        """The response to one request id (notifications on the way are kept)."""
        while True:
            message = await self.next()
            if message.get("id") == request_id and "method" not in message:
                return message

    async def until_method(self, method: str) -> dict[str, Any]:
        while True:
            message = await self.next()
            if message.get("method") == method:
                return message


async def start(base_url: str, *, without_local_runtime: bool = False) -> RawClient:
    # Without a base URL and without the embedded model's runtime there is no endpoint at all.
    head = ["-c", WITHOUT_LOCAL_RUNTIME] if without_local_runtime else ["-m", "toolgate"]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *head,
        "acp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=agent_env(base_url),
        limit=2**20,
    )
    client = RawClient(process)
    await client.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
    )
    assert (await client.answer(0))["result"]["protocolVersion"] == 1
    return client


def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


async def test_bad_lines_get_errors_and_the_agent_goes_on(
    repo: Path, scripted: ScriptedModel
) -> None:
    client = await start(scripted.base_url)
    try:
        await client.send(b"this is not json\n")
        assert (await client.next())["error"]["code"] == -32700
        await client.send(b"[1, 2, 3]\n")
        assert (await client.next())["error"]["code"] == -32600
        # Ids that are no JSON-RPC id, and objects that are no message: each is answered with
        # `"id": null` (checked with every line's shape in `next`).
        for line in (
            b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/new", "params": {}}\n',
            b'{"jsonrpc": "2.0", "id": [1], "method": "session/nonsense"}\n',
            b'{"jsonrpc": "2.0", "id": true, "method": "session/new"}\n',
            b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": 7}\n',
            b"{}\n",
            b'{"jsonrpc": "2.0"}\n',
        ):
            await client.send(line)
            answer = await client.next()
            assert answer["id"] is None and answer["error"]["code"] == -32600, (line, answer)
        big = request(
            7,
            "session/prompt",
            {"sessionId": "x", "prompt": [{"type": "text", "text": "A" * 10_000_000}]},
        )
        await client.send(big)
        answer = await client.answer(7)
        assert answer["error"]["code"] == -32600 and "bytes" in answer["error"]["message"]
        prompt = {"sessionId": "no-such-session", "prompt": [{"type": "text", "text": "hi"}]}
        await client.send(request(8, "session/prompt", prompt))
        assert (await client.answer(8))["error"]["code"] == -32602
        await client.send(request(9, "session/nonsense", {}))
        assert (await client.answer(9))["error"]["code"] == -32601
        await client.send(request(10, "session/new", {"cwd": "relative/path", "mcpServers": []}))
        assert (await client.answer(10))["error"]["code"] == -32602
        # an answer to a permission request that was never asked is ignored, not a crash
        await client.send({"jsonrpc": "2.0", "id": 999, "result": {"outcome": {}}})
        await client.send(request(11, "session/new", {"cwd": str(repo), "mcpServers": []}))
        assert (await client.answer(11))["result"]["sessionId"]
        assert client.process.returncode is None
    finally:
        assert client.process.stdin is not None
        client.process.stdin.close()
        await asyncio.wait_for(client.process.wait(), 60)
    assert scripted.requests == []


async def test_a_client_that_disappears_mid_turn_ends_the_turn(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        {"content": "never asked"},
    ]
    client = await start(scripted.base_url)
    await client.send(request(1, "session/new", {"cwd": str(repo), "mcpServers": []}))
    session_id = (await client.answer(1))["result"]["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "fix add"}]}
    await client.send(request(2, "session/prompt", prompt))
    asked = await client.until_method("session/request_permission")
    assert asked["params"]["toolCall"]["content"][0]["type"] == "diff"
    assert client.process.stdin is not None
    client.process.stdin.close()  # the editor is gone
    assert await asyncio.wait_for(client.process.wait(), 60) == 0
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert len(scripted.requests) == 1
    # the session file is valid: a new agent loads it and replays the turn
    again = await start(scripted.base_url)
    try:
        await again.send(
            request(
                3, "session/load", {"cwd": str(repo), "sessionId": session_id, "mcpServers": []}
            )
        )
        loaded = await again.answer(3)
        assert "error" not in loaded, loaded
        said = [
            m["params"]["update"]
            for m in again.lines
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        ]
        assert said and said[0]["content"]["text"] == "fix add"
    finally:
        assert again.process.stdin is not None
        again.process.stdin.close()
        await asyncio.wait_for(again.process.wait(), 60)


async def test_no_endpoint_is_an_error_for_the_prompt_not_a_crash(repo: Path) -> None:
    client = await start("", without_local_runtime=True)  # no base URL, no local model
    try:
        await client.send(request(1, "session/new", {"cwd": str(repo), "mcpServers": []}))
        session_id = (await client.answer(1))["result"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        await client.send(request(2, "session/prompt", prompt))
        error = (await client.answer(2))["error"]
        assert "endpoint" in json.dumps(error)
        await client.send(request(3, "session/prompt", prompt))  # the session was released
        assert "endpoint" in json.dumps((await client.answer(3))["error"])
    finally:
        assert client.process.stdin is not None
        client.process.stdin.close()
        await asyncio.wait_for(client.process.wait(), 60)
