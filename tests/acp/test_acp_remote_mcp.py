"""A remote MCP server the ACP client hands over (Streamable HTTP), with a sign-in and a question.

The client declares ACP's elicitation: the sign-in page reaches it as a URL elicitation (its
"browser" follows it back to Toolgate's loopback redirect), the server's question as a form.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp.schema import HttpMcpServer
from tests.acp.client import RecordingClient, connect, prompt
from tests.support.mcp_remote import events, remote_server
from tests.support.scripted_model import ScriptedModel, tool_call

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')
pytestmark = pytest.mark.asyncio


async def test_sign_in_and_question_through_acp_elicitation(
    project: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    log = tmp_path / "remote.jsonl"
    scripted.script = [
        tool_call("remote__echo", text="hi"),
        tool_call("remote__ask"),
        {"content": "done"},
    ]
    client = RecordingClient(["allow_once", "allow_once"])
    client.form_answer = {"colour": "green", "sure": False}
    with remote_server(log, "--oauth") as (url, _):
        server = HttpMcpServer(name="remote", url=url, headers=[], type="http")
        async with connect(client, scripted.base_url, elicitation=True) as (conn, _):
            session = await conn.new_session(cwd=str(project), mcp_servers=[server])
            response = await prompt(conn, session.session_id, "use the remote server")
    assert response.stop_reason == "end_turn"
    (page, form) = client.elicitations
    assert page[0] == "Sign in to the MCP server 'remote'" and "/authorize?" in str(page[1].url)
    assert form[0] == "the MCP server 'remote' asks: Which colour?"
    assert [e["event"] for e in events(log) if e["event"] in ("authorize", "token")] == [
        "authorize",
        "token",
    ]
    results = [
        json.loads(m["content"])
        for m in scripted.requests[-1]["messages"]
        if m.get("role") == "tool"
    ]
    assert [r["data"]["text"] for r in results] == [
        "echo: hi",
        'accept: {"colour": "green", "sure": false}',
    ]
