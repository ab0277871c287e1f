"""ACP's approval modes decided by what each tool does, through the Python SDK's client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import EnvVariable, McpServerStdio
from tests.acp.client import RecordingClient, connect, prompt
from tests.acp.conftest import CALC
from tests.support.scripted_model import ScriptedModel, tool_call

pytestmark = pytest.mark.asyncio

ECHO = Path(__file__).parents[1] / "mcp" / "echo_server.py"


def _results(scripted: ScriptedModel) -> dict[str, dict[str, Any]]:
    """What the model read of each call, by the call's tool, one call a turn (ids may repeat)."""
    messages = scripted.requests[-1]["messages"]
    asked = [m["tool_calls"][0]["function"]["name"] for m in messages if m.get("tool_calls")]
    told = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    return dict(zip(asked, told, strict=True))


async def test_read_only_refuses_the_tests_and_an_mcp_tool_that_changes_things(
    project: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    noted = tmp_path / "echo-calls.txt"
    server = McpServerStdio(
        name="echo",
        command=sys.executable,
        args=[str(ECHO)],
        env=[EnvVariable(name="ECHO_STARTS", value=str(noted))],
    )
    scripted.script = [
        tool_call("read_file", path="calc.py"),
        tool_call("run_tests"),
        tool_call("echo__echo", text="hello"),  # no annotations: it may change anything
        tool_call("echo__slow_read", key="k", seconds=0),  # readOnlyHint: a read
        {"content": "I could only look: the mode is read-only."},
    ]
    client = RecordingClient(["allow_once"])  # the one question: the MCP server's read
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[server])
        await conn.set_session_mode(session_id=session.session_id, mode_id="read-only")
        response = await prompt(conn, session.session_id, "fix add and say hello")
    assert response.stop_reason == "end_turn"
    told = _results(scripted)
    assert told["read_file"]["success"] is True
    assert told["echo__slow_read"]["success"] is True
    for name, does in (("run_tests", "runs code"), ("echo__echo", "may change things")):
        refused = told[name]
        assert refused["success"] is False, name
        # The model is told why: the mode, and what the tool does.
        assert 'approval mode "read-only"' in refused["error"], refused
        assert f"{name} {does}" in refused["error"], refused
    # The server saw only the read, the one call the person was asked about.
    calls = [line.split()[2] for line in noted.read_text().splitlines() if line.startswith("call")]
    assert calls == ["slow_read"]
    assert [p.title.split(":")[0] for p in client.permissions] == ["echo__slow_read"]
    assert (project / "calc.py").read_text() == CALC
    # The editor shows both refused calls as failed, with the reason.
    ids = {u.title.split()[0]: u.tool_call_id for u in client.kinds("tool_call")}
    ends = {
        u.tool_call_id: u
        for u in client.kinds("tool_call_update")
        if u.status in ("completed", "failed")
    }
    for name in ("run_tests", "echo__echo"):
        end = ends[ids[name]]
        assert end.status == "failed"
        assert any("read-only" in c.content.text for c in end.content or [])
    kinds = {u.title.split()[0]: u.kind for u in client.kinds("tool_call")}
    assert kinds["read_file"] == "read" and kinds["run_tests"] == "execute"
    assert kinds["echo__slow_read"] == "read" and kinds["echo__echo"] == "other"
