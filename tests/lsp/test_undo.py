"""`toolgate.undoRun` over real stdio: the restore arrives as one `workspace/applyEdit`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, tool_call

CRLF = b"alpha\r\nbeta\r\n"


def _get(value: Any, key: str) -> Any:
    return value[key] if isinstance(value, dict) else getattr(value, key)


async def _run_and_accept(editor: Editor, scripted: ScriptedModel, repo: Path) -> None:
    (repo / "crlf.txt").write_bytes(CRLF)
    scripted.script = [
        tool_call("edit_file", path="README.md", search="Tiny", replace="Small"),
        tool_call("write_file", path="crlf.txt", content="gamma\n"),
        tool_call("write_file", path="made/new.py", content="print('new')\n"),
        {"content": "Done."},
    ]
    await editor.command("toolgate.ask", {"task": "change three files"})
    for n in range(1, 4):
        proposal = await editor.proposal(n)
        await editor.command("toolgate.acceptProposal", proposal["id"])
    assert (await editor.finished())["status"] == "completed"


async def test_undo_through_the_editor_restores_and_deletes(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    readme = uri_of(repo / "README.md")
    editor.open("README.md")
    await _run_and_accept(editor, scripted, repo)
    assert editor.text(readme) == "# Small project\n"
    assert (repo / "made" / "new.py").exists()

    edits_before = len(editor.edits)
    dry = await editor.command("toolgate.undoRun", {"dryRun": True})
    actions = {f["path"]: f["action"] for f in _get(dry, "files")}
    assert actions == {"README.md": "restore", "crlf.txt": "restore", "made/new.py": "remove"}
    assert len(editor.edits) == edits_before and (repo / "made" / "new.py").exists()

    done = await editor.command("toolgate.undoRun", {})
    assert _get(done, "undoRunId").startswith("u-")
    undo_edit = editor.edits[-1]
    assert len(editor.edits) == edits_before + 1 and "undo" in (undo_edit.label or "")
    kinds = {type(c).__name__ for c in undo_edit.edit.document_changes or []}
    assert kinds == {"TextDocumentEdit", "DeleteFile"}
    # The open buffer took the restored text (so the editor's undo can take it back)…
    assert editor.text(readme) == "# Tiny project\n"
    # …and the disk holds the file's exact bytes again; the created file is gone.
    assert (repo / "README.md").read_bytes() == b"# Tiny project\n"
    assert (repo / "crlf.txt").read_bytes() == CRLF
    assert not (repo / "made" / "new.py").exists()

    # Undo of the undo: the run's changes come back, again as an edit.
    again = await editor.command("toolgate.undoRun", {"runId": _get(done, "undoRunId")})
    assert _get(again, "undoRunId") != _get(done, "undoRunId")
    assert editor.text(readme) == "# Small project\n"
    assert (repo / "made" / "new.py").read_text() == "print('new')\n"
    assert (repo / "crlf.txt").read_text() == "gamma\n"


async def test_a_file_edited_since_is_left_alone_and_reported(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    await _run_and_accept(editor, scripted, repo)
    uri = editor.open("README.md")
    editor.change(uri, "# Mine now\n")
    done = await editor.command("toolgate.undoRun", {})
    actions = {f["path"]: f["action"] for f in _get(done, "files")}
    assert actions["README.md"] == "changed_since"
    assert editor.text(uri) == "# Mine now\n"
    assert not (repo / "made" / "new.py").exists()
    restored_uris = {
        c.text_document.uri
        for c in editor.edits[-1].edit.document_changes or []
        if isinstance(c, types.TextDocumentEdit)
    }
    assert uri not in restored_uris


async def test_undo_with_nothing_to_undo_is_an_invalid_params_error(editor: Editor) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await editor.command("toolgate.undoRun")
    assert caught.value.code == -32602 and "nothing to undo" in str(caught.value)
