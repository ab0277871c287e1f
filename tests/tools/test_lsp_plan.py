"""`toolgate.plan` and `toolgate.scaffoldTool` over real stdio, against the scripted model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from tests.lsp.conftest import API_KEY, start_editor
from tests.lsp.harness import Editor
from tests.support.scripted_model import ScriptedModel

PLAN = {
    "goal": "Publish the README",
    "steps": [
        {"step_id": "read", "capability": "fs.read", "inputs": {"path": "README.md"}},
        {
            "step_id": "render",
            "capability": "docs.render",
            "inputs": {"markdown": "${steps.read.output.content}"},
            "capability_contract": {"required_outputs": ["html"]},
        },
    ],
}


@pytest_asyncio.fixture
async def lsp_editor(repo: Path, scripted: ScriptedModel) -> AsyncIterator[Editor]:
    options = {"baseUrl": scripted.base_url, "model": scripted.model, "apiKey": API_KEY}
    editor = await start_editor(repo, options, "visual-studio-code")
    yield editor
    await editor.client.shutdown_session()


async def test_plan_command_reports_gaps_and_scaffolds_the_missing_tool(
    lsp_editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    notes: list[Any] = []
    lsp_editor.client.feature("toolgate/plan")(lambda params: notes.append(params))
    scripted.script = [{"content": json.dumps(PLAN)}]
    reply = await lsp_editor.command("toolgate.plan", {"task": "publish the README"})
    assert reply["status"] == "partial"
    assert [s["tool"] for s in reply["steps"]] == ["read_file", None]
    (gap,) = reply["gaps"]
    assert gap["reason"] == "no_capability_match"
    await lsp_editor.until(lambda: bool(notes))
    assert notes[0].planId == reply["planId"] and notes[0].status == "partial"
    assert notes[0].gaps[0].missing_capability == "docs.render"
    action = gap["scaffold"]
    made = await lsp_editor.command(action["command"], *action["arguments"])
    assert made["name"] == "docs_render"
    assert (repo / "tools" / "docs_render" / "tool.yaml").is_file()
    # The scaffolded tool fills the gap: the same plan is now ready.
    scripted.script = [{"content": json.dumps(PLAN)}]
    again = await lsp_editor.command("toolgate.plan", {"task": "publish the README"})
    assert again["status"] == "ready" and again["gaps"] == []
    assert API_KEY not in json.dumps(again)
