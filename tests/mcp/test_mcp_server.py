"""`toolgate mcp`: the gated tools over real stdio MCP, driven by the SDK's own client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.processes import assert_stopped, slow_test

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')

from mcp import Client, StdioServerParameters  # noqa: E402

BUILTINS = {
    "read_file",
    "write_file",
    "edit_file",
    "list_directory",
    "search_code",
    "git_status",
    "git_add",
    "git_commit",
    "run_tests",
    "run_command",
}


def _client(repo: Path, *args: str) -> Client:
    # The SDK hands a server only HOME, PATH and a few more; the isolated user state goes too.
    env = {k: os.environ[k] for k in ("XDG_CONFIG_HOME", "XDG_STATE_HOME")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolgate", "mcp", "--workspace", str(repo), *args],
        env=env,
        cwd=str(repo),
    )
    return Client(params, mode="legacy", read_timeout_seconds=60)


async def _call(client: Client, name: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    """(isError, the ToolResult the text block carries)."""
    result = await client.call_tool(name, arguments)
    assert len(result.content) == 1 and result.content[0].type == "text"
    payload = json.loads(result.content[0].text)
    assert payload["success"] is not result.is_error
    return result.is_error, payload


async def test_reads_run_and_changes_are_refused_under_deny(repo: Path) -> None:
    (repo / "notes.txt").write_text("first line\nsecond line\n")
    (repo.parent / "secret.txt").write_text("outside the workspace\n")
    async with _client(repo) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == BUILTINS
        assert listed["read_file"].input_schema["required"] == ["path"]
        assert listed["read_file"].annotations.read_only_hint is True
        assert listed["write_file"].annotations.read_only_hint is False

        error, result = await _call(client, "read_file", path="notes.txt")
        assert not error and result["data"]["content"] == "first line\nsecond line\n"

        error, result = await _call(client, "read_file", path="../secret.txt")
        assert error and "'..' is not allowed" in result["error"]

        error, result = await _call(client, "write_file", path="new.txt", content="hello\n")
        assert error and "--approve deny" in result["error"]

        error, result = await _call(
            client, "edit_file", path="notes.txt", search="first", replace="1st"
        )
        assert error and result["data"]["status"] == "rejected"

        error, result = await _call(client, "run_command", command="ls -la")
        assert error and "refused" in result["error"]

        error, result = await _call(client, "read_file")
        assert error and "invalid arguments for read_file" in result["error"]

        error, result = await _call(client, "delete_everything", path=".")
        assert error and "unknown tool" in result["error"]

    assert not (repo / "new.txt").exists()
    assert (repo / "notes.txt").read_text() == "first line\nsecond line\n"
    (log,) = (repo / ".toolgate" / "runs").glob("mcp-*.json")
    doc = json.loads(log.read_text())
    assert doc["status"] == "completed"
    calls = [c for step in doc["steps"] for c in step["calls"]]
    assert [c["name"] for c in calls][:3] == ["read_file", "read_file", "write_file"]
    assert [c["decision"] for c in calls][2:4] == ["rejected", "rejected"]


async def test_changes_apply_under_auto_but_commands_off_the_allow_list_do_not(
    repo: Path,
) -> None:
    (repo / "notes.txt").write_text("first line\r\nsecond line\r\n")
    async with _client(repo, "--approve", "auto") as client:
        error, result = await _call(client, "write_file", path="sub/new.txt", content="hello\n")
        assert not error and result["data"]["status"] == "accepted"

        error, result = await _call(
            client, "edit_file", path="notes.txt", search="first", replace="1st"
        )
        assert not error and result["data"]["hunks_applied"] == [0]

        error, result = await _call(client, "write_file", path=".git/config", content="x")
        assert error

        error, result = await _call(client, "run_command", command="rm -rf sub")
        assert error and "allow-list" in result["error"]

        error, result = await _call(client, "read_file", path="sub/new.txt")
        assert not error and result["data"]["content"] == "hello\n"

    assert (repo / "sub" / "new.txt").read_text() == "hello\n"
    assert (repo / "notes.txt").read_bytes() == b"1st line\r\nsecond line\r\n"


async def test_policy_of_the_persons_config_applies(repo: Path) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[policy]\ndeny_tools = ["list_directory"]\n')
    async with _client(repo, "--approve", "auto") as client:
        error, result = await _call(client, "list_directory", path=".")
        assert error and "denied by policy" in result["error"]
        error, result = await _call(client, "git_status")
        assert not error and result["data"]["clean"] is True


def test_unknown_approve_value_is_a_usage_error(repo: Path) -> None:
    from toolgate.cli import main

    assert main(["mcp", "--workspace", str(repo), "--approve", "ask"]) == 2


async def test_a_cancelled_call_stops_its_test_run(repo: Path) -> None:
    """The client gives up on `run_tests` (`notifications/cancelled`): pytest is ended."""
    beats = slow_test(repo)
    async with _client(repo, "--approve", "auto") as client:
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
        # The server goes on serving.
        error, result = await _call(client, "read_file", path="test_slow.py")
        assert not error and "def test_slow" in result["data"]["content"]
