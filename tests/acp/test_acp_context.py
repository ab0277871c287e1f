"""ACP's attached context: a prompt's embedded resources and resource links become the turn's
context blocks, driven by the Python SDK's client over real stdio against the scripted model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import helpers
from tests.acp.client import RecordingClient, connect
from tests.support.scripted_model import ScriptedModel

pytestmark = pytest.mark.asyncio


def _user(body: dict[str, Any]) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


async def test_embedded_context_is_declared(project: Path, scripted: ScriptedModel) -> None:
    async with connect(RecordingClient(), scripted.base_url) as (conn, _):
        from acp import PROTOCOL_VERSION

        answer = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert answer.agent_capabilities.prompt_capabilities.embedded_context is True


async def test_resources_become_context_blocks_and_a_link_outside_is_refused(
    project: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    (tmp_path / "outside.txt").write_text("outside secret")
    client = RecordingClient()
    # The editor holds calc.py with unsaved text: the link is read as the person sees it.
    client.buffers[str(project / "calc.py")] = "def add(a, b):\n    return a * b  # unsaved\n"
    scripted.script = [{"content": "Seen."}]
    blocks = [
        helpers.text_block("what do these say?"),
        helpers.resource_block(helpers.embedded_text_resource("untitled:notes", "embedded note")),
        helpers.resource_link_block("calc.py", (project / "calc.py").as_uri()),
        helpers.resource_link_block("outside.txt", (tmp_path / "outside.txt").as_uri()),
    ]
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=blocks), 120
        )
    assert response.stop_reason == "end_turn"
    sent = _user(scripted.requests[0])
    assert '<context mention="untitled:notes" kind="resource"' in sent
    assert "embedded note" in sent
    assert "return a * b  # unsaved" in sent
    assert "outside secret" not in sent
    assert "Not attached: outside.txt: " in sent and "outside the workspace" in sent
    assert sent.endswith("what do these say?")  # the words as written, after the context


async def test_a_prompt_of_only_a_resource_is_a_turn(
    project: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": "Seen."}]
    blocks = [helpers.resource_link_block("calc.py", (project / "calc.py").as_uri())]
    async with connect(RecordingClient(), scripted.base_url, fs=False) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=blocks), 120
        )
    assert response.stop_reason == "end_turn"
    sent = _user(scripted.requests[0])
    assert "return a - b" in sent and sent.endswith("Look at the attached context.")
