"""A hostile client over real stdio: every request is answered, never with an internal error.

Every server command and every handled LSP method is sent with wrong types, missing and extra
fields, `null`, a 10 MB string and 10,000 levels of nesting, while a run with a pending
proposal is in flight; each request must be answered with a result or the expected error
(-32602 for bad params), the server must stay alive, and a second `initialize` must not move
the workspace. Then `shutdown` and `exit` with a run, a test run and a proposal in flight.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from tests.lsp.harness import uri_of
from tests.lsp.hostile_cases import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    Case,
    Tally,
    code_action_cases,
    command_cases,
    file_writer,
    initialize_params,
    notification_cases,
    protocol_cases,
    send,
)
from tests.lsp.rawclient import RawClient, encode, frame, nested
from tests.support.processes import parent_of, processes
from tests.support.scripted_model import ScriptedModel

SLOW_TEST = """\
import os, time


def test_ok():
    if os.path.exists("SLOW"):
        time.sleep(120)
    assert 1 + 1 == 2
"""


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "test_ok.py").write_text(SLOW_TEST)
    return repo


@pytest_asyncio.fixture
async def client(project: Path, scripted: ScriptedModel) -> AsyncIterator[RawClient]:
    # A model that proposes a new file at every turn: a proposal is nearly always pending.
    scripted.fallback = file_writer(itertools.count())
    raw = await RawClient().start()
    reply = await raw.request("initialize", initialize_params(uri_of(project), scripted, "sk-test"))
    assert "result" in reply, reply
    await raw.notify("initialized", {})
    yield raw
    await raw.close()
    # Whatever it was sent, every frame the server wrote is a JSON-RPC 2.0 message.
    assert raw.misshapen == [], raw.misshapen[:5]


async def _pending(raw: RawClient, timeout: float = 60.0) -> list[dict[str, Any]]:
    """Wait until a proposal is pending (starting a run if none is active)."""
    deadline = asyncio.get_running_loop().time() + timeout
    started = False
    while True:
        listed = await raw.request(
            "workspace/executeCommand", {"command": "toolgate.listProposals", "arguments": []}
        )
        if listed.get("result"):
            return list(listed["result"])
        if not started:
            await raw.request(
                "workspace/executeCommand",
                {"command": "toolgate.ask", "arguments": [{"task": "write files"}]},
            )
            started = True
        assert asyncio.get_running_loop().time() < deadline, "no proposal came"
        await asyncio.sleep(0.1)


async def _alive(raw: RawClient) -> None:
    reply = await raw.request(
        "workspace/executeCommand", {"command": "toolgate.listProposals", "arguments": []}
    )
    assert "result" in reply, reply


async def test_every_malformed_message_is_answered_and_the_server_survives(
    client: RawClient, project: Path
) -> None:
    file_uri = uri_of(project / "test_ok.py")
    root_uri = uri_of(project)
    await _pending(client)
    tally = Tally()
    groups = [
        ("commands", command_cases(file_uri)),
        ("code actions", code_action_cases(file_uri)),
        ("protocol", protocol_cases(root_uri)),
        ("notifications", notification_cases(file_uri, root_uri)),
    ]
    for name, cases in groups:
        for case in cases:
            await send(client, case, tally)
        assert client.alive, f"the server died during the {name} cases"
        await _alive(client)
    print(f"\nhostile client: {tally.line()}")
    assert tally.tried > 500 and tally.notifications > 200
    assert tally.silent == [], tally.silent[:10]
    assert tally.internal_errors == 0
    assert tally.unexpected == [], tally.unexpected[:10]
    assert tally.answered == tally.tried
    # Bad params were refused as such, and well-formed ones got results.
    assert tally.errors[INVALID_PARAMS] > 400 and tally.results > 50
    # The run and its proposals went on through all of it.
    assert client.alive
    await _pending(client)


async def test_malformed_frames_are_refused_with_the_request_id(client: RawClient) -> None:
    # 10 MB of params: read through and dropped; the id is found in the first bytes.
    body = (
        b'{"jsonrpc": "2.0", "id": 501, "method": "workspace/executeCommand", "params": '
        b'{"command": "toolgate.ask", "arguments": [{"task": "' + b"x" * 10_000_000 + b'"}]}}'
    )
    reply = await client.send_for(501, body)
    assert reply["error"]["code"] == INVALID_PARAMS
    assert "over the limit of 8388608 bytes" in reply["error"]["message"]
    # 10,000 levels of nesting: refused without parsing.
    deep = (
        b'{"jsonrpc": "2.0", "id": 502, "method": "textDocument/codeAction", "params": '
        + nested(10_000).encode()
        + b"}"
    )
    reply = await client.send_for(502, deep)
    assert reply["error"]["code"] == INVALID_PARAMS
    assert "nests deeper than" in reply["error"]["message"]
    # Nesting under the limit is read, and refused for its type like any other value.
    reply = await client.send_for(
        503,
        b'{"jsonrpc": "2.0", "id": 503, "method": "workspace/executeCommand", "params": {'
        b'"command": "toolgate.cancel", "arguments": ' + nested(90).encode() + b"}}",
    )
    assert reply["error"]["code"] == INVALID_PARAMS
    # Not JSON, a non-object, a wrong jsonrpc version, an id of the wrong type.
    await client.write(frame(b'{"jsonrpc": "2.0", "id": 504, "method": '))
    await client.write(frame(b"[1, 2, 3]"))
    reply = await client.send_for(
        505, b'{"jsonrpc": "1.0", "id": 505, "method": "workspace/executeCommand"}'
    )
    assert reply["error"]["code"] == INVALID_REQUEST
    await client.write(frame(b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}'))
    # Garbage headers, an overlong header line, a missing Content-Length.
    await client.write(b"X-Junk: " + b"y" * 100_000 + b"\r\nContent-Length: 2\r\n\r\n{}")
    await client.write(b"Content-Type: nothing\r\n\r\n")
    # An object that is neither a request nor a response.
    await client.write(frame(b'{"jsonrpc": "2.0"}'))
    await asyncio.sleep(0.5)
    errors = [m["error"]["code"] for m in client.unmatched()]
    assert errors.count(-32700) == 1 and errors.count(INVALID_REQUEST) == 4, client.unmatched()
    # No id could be read from any of them: JSON-RPC 2.0 answers those with `"id": null`.
    assert all("id" in m and m["id"] is None for m in client.unmatched()), client.unmatched()
    assert client.misshapen == [], client.misshapen
    await _alive(client)


async def test_the_size_limit_is_set_by_the_environment(project: Path) -> None:
    raw = await RawClient(env={"TOOLGATE_MAX_MESSAGE_BYTES": "4096"}).start()
    try:
        init = {"processId": None, "rootUri": uri_of(project), "capabilities": {}}
        assert "result" in await raw.request("initialize", init)
        await raw.notify("initialized", {})
        reply = await raw.request(
            "workspace/executeCommand",
            {"command": "toolgate.rejectProposal", "arguments": ["p-1", "y" * 5000]},
        )
        assert reply["error"]["code"] == INVALID_PARAMS
        assert "over the limit of 4096 bytes" in reply["error"]["message"]
        await _alive(raw)
    finally:
        await raw.close()


async def test_a_second_initialize_does_not_move_the_workspace(
    client: RawClient, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "test_x.py").write_text("def test_x():\n    assert False\n")
    reply = await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": uri_of(other),
            "workspaceFolders": [{"uri": uri_of(other), "name": "other"}],
            "capabilities": {},
        },
    )
    assert reply["error"]["code"] == INVALID_REQUEST
    assert "already initialized" in reply["error"]["message"]
    fix = await client.request(
        "workspace/executeCommand",
        {
            "command": "toolgate.fixFailure",
            "arguments": [{"uri": uri_of(other / "test_x.py"), "line": 1, "testId": "test_x"}],
        },
    )
    assert fix["error"]["code"] == INVALID_PARAMS
    assert "outside the workspace" in fix["error"]["message"]
    ask = await client.request(
        "workspace/executeCommand",
        {
            "command": "toolgate.ask",
            "arguments": [{"task": "look", "context": {"uri": uri_of(other / "test_x.py")}}],
        },
    )
    assert "outside the workspace" in ask["error"]["message"]
    assert not (other / ".toolgate").exists()


async def test_requests_before_initialize_and_after_shutdown_are_answered(
    project: Path,
) -> None:
    raw = await RawClient().start()
    try:
        early = await raw.request(
            "workspace/executeCommand", {"command": "toolgate.listProposals", "arguments": []}
        )
        assert early["error"]["code"] == -32002
        await raw.notify("textDocument/didOpen", {"textDocument": None})
        init = {"processId": None, "rootUri": uri_of(project), "capabilities": {}}
        assert "result" in await raw.request("initialize", init)
        assert await raw.request("shutdown") == {"jsonrpc": "2.0", "id": 3, "result": None}
        late = await raw.request(
            "workspace/executeCommand", {"command": "toolgate.listProposals", "arguments": []}
        )
        assert late["error"]["code"] == INVALID_REQUEST
        assert "shutting down" in late["error"]["message"]
        await raw.notify("exit")
        assert await asyncio.wait_for(raw.process.wait(), 30) == 0  # type: ignore[union-attr]
    finally:
        await raw.close()


def _pytest_children(pid: int) -> list[int]:
    """Processes (any depth) under `pid` that run pytest."""
    return [
        child for child, cmdline in processes() if b"pytest" in cmdline and _descends(child, pid)
    ]


def _descends(child: int, pid: int) -> bool:
    ppid = parent_of(child)
    seen = 0
    while ppid is not None and ppid > 1 and seen < 50:
        if ppid == pid:
            return True
        ppid = parent_of(ppid)
        seen += 1
    return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
async def test_shutdown_and_exit_with_a_run_tests_and_proposals_in_flight(
    client: RawClient, project: Path
) -> None:
    assert client.process is not None
    pending = await _pending(client)
    (project / "SLOW").write_text("")
    tests_id = client.new_id()
    tests_future = client.expect(tests_id)
    await client.write(
        encode(
            {
                "jsonrpc": "2.0",
                "id": tests_id,
                "method": "workspace/executeCommand",
                "params": {"command": "toolgate.runTests", "arguments": [{}]},
            }
        )
    )
    deadline = asyncio.get_running_loop().time() + 60
    while not _pytest_children(client.process.pid):
        assert asyncio.get_running_loop().time() < deadline, "the test run never started"
        await asyncio.sleep(0.1)
    reply = await client.request("shutdown")
    assert "error" not in reply and reply["result"] is None
    # The test run in flight is answered (cancelled), not dropped, and its process is gone.
    tests_reply = await asyncio.wait_for(tests_future, 30)
    assert tests_reply["error"]["code"] == -32800, tests_reply
    resolved = [
        n["params"] for n in client.notifications if n["method"] == "toolgate/proposalResolved"
    ]
    assert {p["id"] for p in pending} <= {r["id"] for r in resolved}
    assert all(r["status"] == "cancelled" for r in resolved if r["id"] == pending[0]["id"])
    await client.notify("exit")
    assert await asyncio.wait_for(client.process.wait(), 30) == 0
    await asyncio.sleep(0.5)
    assert _pytest_children(client.process.pid) == []
    assert not any(p.suffix == ".tmp" for p in project.rglob("*"))
    assert os.path.exists(project / "test_ok.py")


def test_cases_cover_every_command_and_method(project: Path) -> None:
    from toolgate.lsp.server import server

    commands = list(server.protocol.fm.commands)
    assert len(commands) >= 9
    uri = uri_of(project / "a.py")
    labels = [c.label for c in command_cases(uri)]
    for command in commands:
        assert any(label.startswith(command + " ") for label in labels), command
    methods = {c.method for c in notification_cases(uri, uri)} | {
        c.method for c in code_action_cases(uri)
    }
    assert {"textDocument/didOpen", "textDocument/didChange", "textDocument/codeAction"} <= methods
    assert isinstance(next(iter(protocol_cases(uri))), Case)
