"""The person edits a file while a proposal waits: re-based when it still fits, else stale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.harness import PROPOSAL_RESOLVED, Editor
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

ORIGINAL = "".join(f"line {i}\n" for i in range(30))


async def _proposal_for_line_10(
    editor: Editor, scripted: ScriptedModel, repo: Path, answer: str
) -> tuple[str, dict[str, Any]]:
    """Open a.py and have the model propose to shout its line 10; the uri and the proposal."""
    (repo / "a.py").write_text(ORIGINAL)
    uri = editor.open("a.py")
    scripted.script = [
        tool_call("edit_file", path="a.py", search="line 10\n", replace="LINE 10\n"),
        {"content": answer},
    ]
    await editor.command("toolgate.ask", {"task": "shout line 10"})
    return uri, await editor.proposal()


async def test_conflicting_edit_makes_proposal_stale(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    uri, proposal = await _proposal_for_line_10(editor, scripted, repo, "I will read it again.")
    mine = ORIGINAL.replace("line 10\n", "my own line 10\n")
    editor.change(uri, mine)
    await editor.until(
        lambda: any(r["id"] == proposal["id"] for r in editor.resolved), on=PROPOSAL_RESOLVED
    )
    resolved = next(r for r in editor.resolved if r["id"] == proposal["id"])
    assert resolved["status"] == "stale"
    assert resolved["hunksApplied"] == []
    assert (await editor.finished())["status"] == "incomplete"  # nothing landed after it
    assert editor.edits == []  # nothing was sent to the editor
    assert editor.text(uri) == mine
    assert (repo / "a.py").read_text() == ORIGINAL
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is False
    assert "stale" in told["error"]
    assert any("read_file a.py" in s for s in told["suggestions"])


async def test_edit_above_the_hunk_rebases_the_proposal(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    uri, first = await _proposal_for_line_10(editor, scripted, repo, "done")
    assert first["hunks"][0]["range"]["start"]["line"] == 10
    mine = "# header one\n# header two\n" + ORIGINAL
    editor.change(uri, mine)
    await editor.proposal(2)
    again = [p for p in editor.proposals if p["status"] == "pending"][1]
    assert again["id"] == first["id"]
    assert again["hunks"][0]["range"] == {
        "start": {"line": 12, "character": 0},
        "end": {"line": 13, "character": 0},
    }
    assert again["version"] == 2
    assert again["proposedText"] == mine.replace("line 10\n", "LINE 10\n")
    assert not editor.resolved  # still pending, not stale
    result = await editor.command("toolgate.acceptProposal", first["id"])
    assert _get(result, "status") == "accepted"
    await editor.finished()
    change = editor.edits[-1].edit.document_changes[0]
    assert change.text_document.version == 2
    assert [e.range.start.line for e in change.edits] == [12]
    assert editor.text(uri) == mine.replace("line 10\n", "LINE 10\n")
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is True and told["data"]["status"] == "accepted"


def _get(obj: object, key: str) -> object:
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)
