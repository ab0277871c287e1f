"""The language server (real stdio, a real LSP client): the customization list and commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from tests.lsp.harness import Editor
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


@pytest.fixture
def customized(repo: Path) -> Path:
    write(repo / ".claude/commands/fix.md", "---\ndescription: Fix it\n---\nFix $ARGUMENTS now.")
    write(
        repo / ".agents/skills/style/SKILL.md",
        "---\nname: style\ndescription: House style.\n---\nx",
    )
    write(repo / ".cursor/rules/api.mdc", "---\nglobs: api/*.py\n---\nReturn dicts. Marker R-5.")
    write(repo / "api/h.py", "def h():\n    return {}\n")
    write(
        repo / ".claude/settings.json",
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "make lint"}]}]}}),
    )
    return repo


async def _finished(editor: Editor, started: dict[str, Any]) -> None:
    run_id = started["runId"]
    await editor.until(
        lambda: any(e["type"] == "run_finished" and e["runId"] == run_id for e in editor.events),
        60,
    )


async def test_the_customization_and_a_prompt_command_over_lsp(
    customized: Path, editor: Editor, scripted: ScriptedModel
) -> None:
    found = await editor.command("toolgate.customization")
    assert [c["name"] for c in found["commands"]] == ["fix"]
    assert [s["name"] for s in found["skills"]] == ["style"]
    assert {r["file"]: r["applies"] for r in found["rules"]} == {".cursor/rules/api.mdc": "globs"}
    assert found["hooks"] == [
        {
            "event": "Stop",
            "matcher": "",
            "command": "make lint",
            "source": str(customized / ".claude/settings.json"),
            "trusted": False,
        }
    ]
    scripted.script = [tool_call("read_file", path="api/h.py"), {"content": "Fixed."}]
    started = await editor.command("toolgate.runCommand", {"name": "fix", "arguments": "api/h.py"})
    await _finished(editor, started)
    users = [m["content"] for m in scripted.requests[0]["messages"] if m["role"] == "user"]
    assert users[-1].endswith("Fix api/h.py now.")
    assert "Marker R-5" in json.dumps(last_tool_result(scripted.requests[1]))
    with pytest.raises(JsonRpcException, match="no prompt command /nope; this project has: /fix"):
        await editor.command("toolgate.runCommand", {"name": "nope"})
