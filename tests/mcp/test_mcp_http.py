"""`toolgate mcp --http`: the gated tools over real Streamable HTTP, driven by the SDK's client."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from tests.support.mcp_http import http_server, wait_for
from tests.support.processes import assert_stopped, slow_test

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')

import httpx2  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from mcp import Client  # noqa: E402


def _client(url: str, **kwargs: Any) -> Client:
    return Client(url, mode="legacy", read_timeout_seconds=60, **kwargs)


def _post(url: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, str]:
    """One raw POST, with the headers exactly as given (Host included)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.putrequest("POST", parts.path, skip_host="Host" in headers)
        payload = json.dumps(body).encode()
        for key, value in {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Content-Length": str(len(payload)),
            **headers,
        }.items():
            connection.putheader(key, value)
        connection.endheaders(payload)
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


async def test_tools_sessions_and_log_lines_over_http(repo: Path) -> None:
    (repo / "notes.txt").write_text("hello\n")
    lines: list[types.LoggingMessageNotificationParams] = []

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        lines.append(params)

    with http_server(repo) as server:
        assert server.url.startswith("http://127.0.0.1:")
        async with _client(server.url, logging_callback=logged) as client:
            assert client.server_capabilities.logging is not None
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"read_file", "write_file", "run_tests"} <= names
            assert "test_simple_text" not in names  # fixtures only when asked for

            result = await client.call_tool("read_file", {"path": "notes.txt"})
            assert json.loads(result.content[0].text)["data"]["content"] == "hello\n"
            result = await client.call_tool("write_file", {"path": "x.txt", "content": "x"})
            assert result.is_error

            # The default level is info: both decisions were told, the refusal as a warning.
            said = [(p.level, p.data) for p in lines]
            assert said[0] == ("info", "read_file: auto, done")
            assert said[1][0] == "warning" and said[1][1].startswith("write_file: rejected")
            assert all(p.logger == "toolgate" for p in lines)

            await client.set_logging_level("error")
            await client.call_tool("write_file", {"path": "x.txt", "content": "x"})
            assert len(lines) == 2  # a warning is below the level now

        # A second session keeps its own level (the default).
        lines.clear()
        async with _client(server.url, logging_callback=logged) as client:
            await client.call_tool("read_file", {"path": "notes.txt"})
            assert [p.level for p in lines] == ["info"]
    assert not (repo / "x.txt").exists()


def test_requests_from_another_host_or_origin_are_refused(repo: Path) -> None:
    with http_server(repo) as server:
        port = urlsplit(server.url).port
        # DNS rebinding: a page on evil.example resolved to 127.0.0.1.
        status, _ = _post(server.url, {"Host": f"evil.example:{port}"}, INITIALIZE)
        assert status == 421
        status, _ = _post(server.url, {"Origin": "http://evil.example"}, INITIALIZE)
        assert status == 403
        # Its own name and a local page are let in.
        status, body = _post(
            server.url,
            {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"},
            INITIALIZE,
        )
        assert status == 200, body
        assert '"protocolVersion"' in body
        # The transport's own rules: a GET without a session is refused, so is a bad Accept.
        status, _ = _post(server.url, {"Accept": "text/html"}, INITIALIZE)
        assert status == 406


async def test_off_loopback_a_bearer_token_is_required(repo: Path) -> None:
    with http_server(repo, "--host", "0.0.0.0") as server:
        # The token is printed on its own line after the URL: the reader may not be there yet.
        wait_for(lambda: "Authorization: Bearer" in server.stderr)
        match = re.search(r"'Authorization: Bearer (\S+)'", server.stderr)
        assert match, server.stderr
        token = match.group(1)
        assert server.stderr.count(token) == 1  # printed once

        status, body = _post(server.url, {}, INITIALIZE)
        assert status == 401 and "invalid_token" in body
        status, _ = _post(server.url, {"Authorization": "Bearer wrong"}, INITIALIZE)
        assert status == 401

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with (
            http,
            Client(streamable_http_client(server.url, http_client=http), mode="legacy") as client,
        ):
            assert "read_file" in {t.name for t in (await client.list_tools()).tools}


def test_a_token_from_the_environment_is_required_on_loopback_too(repo: Path) -> None:
    with http_server(repo, env={"TOOLGATE_MCP_TOKEN": "s3cret-token"}) as server:
        wait_for(lambda: "TOOLGATE_MCP_TOKEN" in server.stderr)  # the line after the URL's
        assert "s3cret-token" not in server.stderr
        assert _post(server.url, {}, INITIALIZE)[0] == 401
        assert _post(server.url, {"Authorization": "Bearer s3cret-token"}, INITIALIZE)[0] == 200


def test_a_port_in_use_is_a_clear_error(repo: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolgate",
                "mcp",
                "--http",
                "--port",
                str(port),
                "--workspace",
                str(repo),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


async def test_a_cancelled_call_stops_its_test_run_over_http(repo: Path) -> None:
    beats = slow_test(repo)
    with http_server(repo, "--approve", "auto") as server:
        async with _client(server.url) as client:
            call = asyncio.create_task(client.call_tool("run_tests", {}))
            for _ in range(600):
                if beats.exists() or call.done():
                    break
                await asyncio.sleep(0.1)
            assert beats.exists(), call
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            await assert_stopped(beats)
            result = await client.call_tool("read_file", {"path": "test_slow.py"})
            assert not result.is_error


async def test_session_ends_with_delete(repo: Path) -> None:
    with http_server(repo) as server:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(
                server.url,
                json=INITIALIZE,
                headers={"Accept": "application/json, text/event-stream"},
            )
            session = opened.headers["mcp-session-id"]
            assert session
            ended = await http.delete(
                server.url,
                headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"},
            )
            assert ended.status_code == 200
            gone = await http.post(
                server.url,
                json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                headers={
                    "Accept": "application/json, text/event-stream",
                    "Mcp-Session-Id": session,
                    "MCP-Protocol-Version": "2025-11-25",
                },
            )
            assert gone.status_code == 404


async def test_agent_tools_over_http_send_their_progress_as_log_lines(repo: Path) -> None:
    (repo / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    lines: list[types.LoggingMessageNotificationParams] = []

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        lines.append(params)

    with http_server(repo, "--agent-tools", "--approve", "auto") as server:
        async with _client(server.url, logging_callback=logged) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"implement_code", "run_tests", "read_file"} <= names
            result = await client.call_tool("run_tests", {"test_scope": "test_ok.py"})
    payload = json.loads(result.content[0].text)
    assert payload["success"] and payload["data"]["passed"] == 1, payload
    said = [str(p.data) for p in lines]
    assert any(line.startswith("running ") and "pytest" in line for line in said), said
