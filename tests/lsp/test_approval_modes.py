"""The approval modes in the language server: a setting and a command, decided by tool kinds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from tests.lsp.conftest import start_editor
from tests.lsp.harness import Editor
from tests.support.scripted_model import ScriptedModel, tool_call


def _results(scripted: ScriptedModel) -> list[dict[str, Any]]:
    """Every tool result the model read, in order."""
    return [
        json.loads(m["content"]) for m in scripted.requests[-1]["messages"] if m["role"] == "tool"
    ]


async def test_the_setting_read_only_refuses_tests_and_changes_and_says_why(
    repo: Path, scripted: ScriptedModel, options: dict[str, Any]
) -> None:
    (repo / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    scripted.script = [
        tool_call("read_file", path="README.md"),
        tool_call("run_tests"),
        tool_call("write_file", path="new.txt", content="x\n"),
        {"content": "I could only read."},
    ]
    editor = await start_editor(
        repo, {**options, "approvalMode": "read-only"}, "visual-studio-code"
    )
    try:
        started = await editor.command("toolgate.ask", {"task": "run the tests, add new.txt"})
        finished = await editor.finished()
        loaded = await editor.command("toolgate.loadSession", {"sessionId": started["sessionId"]})
    finally:
        await editor.close()
    read, tests, write = _results(scripted)
    assert read["success"] is True
    for refused, words in ((tests, "run_tests runs code"), (write, "write_file changes files")):
        assert refused["success"] is False
        assert 'approval mode "read-only"' in refused["error"] and words in refused["error"]
    assert not (repo / "new.txt").exists()
    assert editor.proposals == []  # nothing was proposed, nobody was asked
    assert finished["status"] == "incomplete"
    # Every front end is told what each tool does, live and in the stored session.
    kinds = {e["tool"]: e["toolKind"] for e in editor.events if e["type"] == "tool_call"}
    assert kinds == {"read_file": "read", "run_tests": "run", "write_file": "change"}
    stored = {e["name"]: e.get("toolKind") for e in loaded["transcript"] if e["kind"] == "tool"}
    assert stored == kinds


async def test_the_command_sets_the_mode_of_the_next_runs(
    editor: Editor, repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "a.py").write_text("x = 1\n")
    asked = await editor.command("toolgate.setApprovalMode", {})
    assert asked["mode"] == "ask" and list(asked["modes"]) == ["ask", "auto-edits", "read-only"]
    with pytest.raises(JsonRpcException) as caught:
        await editor.command("toolgate.setApprovalMode", {"mode": "yolo"})
    assert "ask, auto-edits, read-only" in str(caught.value)

    chosen = await editor.command("toolgate.setApprovalMode", {"mode": "auto-edits"})
    assert chosen["mode"] == "auto-edits"
    scripted.script = [
        tool_call("edit_file", path="a.py", search="x = 1", replace="x = 2"),
        {"content": "changed"},
    ]
    await editor.command("toolgate.ask", {"task": "make x 2"})
    assert (await editor.finished())["status"] == "completed"
    # Applied without a proposal waiting for the person.
    assert [p["status"] for p in editor.proposals] == ["accepted"]
    assert (repo / "a.py").read_text() == "x = 2\n"

    # A changed setting sets it again.
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"toolgate": {"approvalMode": "read-only"}})
    )
    # The notification's handler runs as a task of its own: ask until it has (as a client would
    # see the change on its next look), for at most a few seconds.
    for _ in range(50):
        mode = (await editor.command("toolgate.setApprovalMode", {}))["mode"]
        if mode == "read-only":
            break
        await asyncio.sleep(0.1)
    assert mode == "read-only"
