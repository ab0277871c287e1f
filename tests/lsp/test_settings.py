"""Settings from the editor take effect; confirmable edits let the editor's preview review."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.lsp.conftest import API_KEY, start_editor
from tests.lsp.harness import PROPOSAL_RESOLVED, Editor
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

ORIGINAL = "".join(f"line {i}\n" for i in range(30))
NEW_KEY = "sk-live-ANOTHER-secret-9876543210"


async def test_did_change_configuration_takes_effect_and_hides_keys(
    repo: Path,
    scripted: ScriptedModel,
    options: dict[str, Any],
    capfd: pytest.CaptureFixture[str],
) -> None:
    editor = await start_editor(repo, options, "visual-studio-code", verbose=True)
    try:
        await _change_configuration(editor, scripted, repo)
        await editor.client.shutdown_session()
    finally:
        await editor.client.stop()
    stderr = capfd.readouterr().err
    assert "Language server initialized" in stderr  # the verbose log did reach us
    everything = repr(
        [
            editor.events,
            editor.proposals,
            editor.resolved,
            [m.message for m in editor.client.log_messages],
            [m.message for m in editor.client.messages],
        ]
    )
    for key in (API_KEY, NEW_KEY, "NOT-SHAPED-LIKE-A-KEY-42"):
        assert key not in everything
        assert key not in stderr


async def _change_configuration(editor: Editor, scripted: ScriptedModel, repo: Path) -> None:
    (repo / "a.py").write_text(ORIGINAL)
    uri = editor.open("a.py")
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={
                "toolgate": {
                    "approval": {"edit_file": "auto"},
                    "model": "other-model",
                    "apiKey": NEW_KEY,
                }
            }
        )
    )
    scripted.script = [
        tool_call("edit_file", path="a.py", search="line 3\n", replace="LINE 3\n"),
        {"status": 401, "error": f"bad keys {API_KEY} and {NEW_KEY}"},
    ]
    await editor.command("toolgate.ask", {"task": "shout line 3"})
    finished = await editor.finished()
    assert finished["status"] == "failed" and "401" in finished["reason"]
    assert scripted.requests[0]["model"] == "other-model"
    # edit_file is now auto-approved: applied through the editor without a pending proposal.
    assert [p["status"] for p in editor.proposals] == ["accepted"]
    assert editor.text(uri) == ORIGINAL.replace("line 3\n", "LINE 3\n")
    assert last_tool_result(scripted.requests[-1])["data"]["status"] == "accepted"

    # A client that pushes no settings gets them pulled with workspace/configuration.
    editor.client.set_configuration(
        {"model": "pulled-model", "apiKey": "NOT-SHAPED-LIKE-A-KEY-42"}, section="toolgate"
    )
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings=None)
    )
    await editor.until(lambda: editor.config_pulls == ["toolgate"])
    await editor.command("toolgate.listProposals")  # the pulled answer is read by now
    scripted.script = [{"content": "hi"}]
    editor.events.clear()
    await editor.command("toolgate.ask", {"task": "greet"})
    assert (await editor.finished())["status"] == "completed"
    assert scripted.requests[-1]["model"] == "pulled-model"


async def test_confirm_in_editor_reads_which_hunks_landed(
    repo: Path, scripted: ScriptedModel, options: dict[str, Any]
) -> None:
    (repo / "a.py").write_text(ORIGINAL)
    options = {**options, "review": {"confirmInEditor": True}}
    editor = await start_editor(repo, options, "visual-studio-code")
    try:
        uri = editor.open("a.py")
        # The person ticks only the second change in the editor's preview.
        editor.keep_edits = lambda edits: [e for e in edits if "25" in e.new_text]
        new = ORIGINAL.replace("line 2\n", "LINE 2\n").replace("line 25\n", "LINE 25\n")
        scripted.script = [tool_call("write_file", path="a.py", content=new), {"content": "ok"}]
        await editor.command("toolgate.ask", {"task": "shout lines 2 and 25"})
        await editor.until(lambda: bool(editor.resolved), on=PROPOSAL_RESOLVED)
        # The edit went out by itself, marked for confirmation, with both hunks in it.
        (sent,) = editor.edits
        annotations = sent.edit.change_annotations or {}
        (annotation,) = annotations.values()
        assert annotation.needs_confirmation is True
        assert annotation.label == "write_file: a.py"
        change = sent.edit.document_changes[0]
        assert [e.new_text for e in change.edits] == ["LINE 2\n", "LINE 25\n"]
        assert {e.annotation_id for e in change.edits} == set(annotations)
        assert editor.resolved[-1]["status"] == "partially_accepted"
        assert editor.resolved[-1]["hunksApplied"] == [1]
        await editor.finished()
        assert editor.text(uri) == ORIGINAL.replace("line 25\n", "LINE 25\n")
        told = last_tool_result(scripted.requests[-1])
        assert told["data"]["hunks_applied"] == [1] and told["data"]["hunks_rejected"] == [0]
    finally:
        await editor.close()
