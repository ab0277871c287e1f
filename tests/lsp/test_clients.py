"""Clients other than VS Code: the generic code-action path, no applyEdit, refused edits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from tests.lsp.conftest import start_editor
from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

ORIGINAL = "".join(f"line {i}\n" for i in range(30))


EDIT_SELECTION = "Toolgate: Edit selection…"


async def reviews(editor: Editor, uri: str, line: int, end_line: int) -> list[dict[str, Any]]:
    """The menu over whole lines, the proposals' part: a selection also offers its edit, last."""
    actions = await editor.code_actions(uri, line, end_line)
    assert actions and actions[-1]["title"] == EDIT_SELECTION
    return actions[:-1]


@pytest_asyncio.fixture
async def neovim(repo: Path, options: dict[str, Any]) -> AsyncIterator[Editor]:
    ed = await start_editor(repo, options, "neovim")
    yield ed
    await ed.close()


@pytest_asyncio.fixture
async def no_apply(repo: Path, options: dict[str, Any]) -> AsyncIterator[Editor]:
    ed = await start_editor(repo, options, "neovim", apply_edit=False)
    yield ed
    await ed.close()


async def test_generic_client_reviews_with_code_actions_only(
    neovim: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    """As Neovim would: no toolgate/* notification is read, only code actions and commands."""
    editor = neovim
    (repo / "a.py").write_text(ORIGINAL)
    (repo / "b.py").write_text(ORIGINAL)
    a_uri = editor.open("a.py")
    b_uri = uri_of(repo / "b.py")
    new_a = ORIGINAL.replace("line 2\n", "LINE 2\n").replace("line 25\n", "LINE 25\n")
    scripted.script = [
        tool_call("write_file", path="a.py", content=new_a),
        tool_call("edit_file", path="b.py", search="line 7\n", replace="LINE 7\n"),
        {"content": "all done"},
    ]
    await editor.command("toolgate.ask", {"task": "shout some lines"})

    # The lightbulb on line 25 of a.py: accept / reject the proposal, and accept this hunk.
    actions = await editor.poll(lambda: reviews(editor, a_uri, 25, 26))
    titles = [a["title"] for a in actions]
    assert [t.split()[0] for t in titles] == ["Accept", "Reject", "Accept"]
    assert titles[2].startswith("Accept hunk 2 of")
    hunk = actions[2]["command"]
    assert hunk["command"] == "toolgate.acceptProposal"
    assert hunk["arguments"][1] == [1]
    # Nothing pending on b.py yet: its menu offers only the review of a.py's proposal.
    elsewhere = await editor.code_actions(b_uri)
    assert [a["title"] for a in elsewhere] == [
        "Review pending proposals (1): accept write_file proposal: a.py",
        "Review pending proposals (1): reject write_file proposal: a.py",
    ]
    assert elsewhere[0]["command"]["arguments"] == actions[0]["command"]["arguments"]
    await editor.command(hunk["command"], *hunk["arguments"])
    assert editor.text(a_uri) == ORIGINAL.replace("line 25\n", "LINE 25\n")
    # The client did not advertise `documentChanges`: the edit is a plain `changes` map.
    edit = editor.edits[-1].edit
    assert edit.document_changes is None
    assert [e.new_text for e in edit.changes[a_uri]] == ["LINE 25\n"]

    actions = await editor.poll(lambda: reviews(editor, b_uri, 7, 8))
    reject = next(a for a in actions if a["title"].startswith("Reject"))
    assert reject["title"] == "Reject edit_file proposal: b.py"
    assert reject["command"]["command"] == "toolgate.rejectProposal"
    await editor.command(reject["command"]["command"], *reject["command"]["arguments"])
    await editor.until(lambda: len(scripted.requests) == 3)
    assert await reviews(editor, b_uri, 7, 8) == []
    assert (repo / "b.py").read_text() == ORIGINAL
    # the client saved the accepted buffer when the server asked
    assert (repo / "a.py").read_text() == ORIGINAL.replace("line 25\n", "LINE 25\n")
    first = scripted.requests[1]["messages"][-1]
    assert '"hunks_applied": [1]' in first["content"]
    told = last_tool_result(scripted.requests[2])
    assert told["success"] is False and "rejected" in told["error"]


async def test_client_without_apply_edit_gets_disk_writes(
    no_apply: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    editor = no_apply
    (repo / "a.py").write_text(ORIGINAL)
    scripted.script = [
        tool_call("edit_file", path="a.py", search="line 3\n", replace="LINE 3\n"),
        tool_call("write_file", path="pkg/new.py", content="x = 1\n"),
        {"content": "done"},
    ]
    await editor.command("toolgate.ask", {"task": "shout and create"})
    first = await editor.proposal()
    assert (await editor.command("toolgate.acceptProposal", first["id"]))["status"] == "accepted"
    assert (repo / "a.py").read_text() == ORIGINAL.replace("line 3\n", "LINE 3\n")
    second = await editor.proposal(2)
    assert second["isNewFile"] is True
    await editor.command("toolgate.acceptProposal", second["id"])
    assert (await editor.finished())["status"] == "completed"
    assert (repo / "pkg" / "new.py").read_text() == "x = 1\n"
    assert editor.edits == []  # nothing was asked of the client
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is True and told["data"]["status"] == "accepted"


async def test_applied_false_counts_as_rejection(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "a.py").write_text(ORIGINAL)
    editor.apply_result = False
    scripted.script = [
        tool_call("edit_file", path="a.py", search="line 3\n", replace="LINE 3\n"),
        {"content": "fine"},
    ]
    await editor.command("toolgate.ask", {"task": "shout line 3"})
    proposal = await editor.proposal()
    result = await editor.command("toolgate.acceptProposal", proposal["id"])
    assert result["status"] == "rejected"
    assert result["hunksApplied"] == []
    assert len(editor.edits) == 1
    await editor.finished()
    assert editor.resolved[-1]["status"] == "rejected"
    assert editor.resolved[-1]["reason"] == "the editor did not apply the edit"
    assert (repo / "a.py").read_text() == ORIGINAL
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is False
    assert told["data"]["status"] == "rejected"
    assert "the editor did not apply the edit" in told["error"]


async def test_a_new_file_for_a_client_that_cannot_create_files(
    neovim: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    """Neovim applies edits but advertises no CreateFile: nothing touches disk until accepted.

    Then the accepted text is written in one step, never an empty file first: even an editor
    that refuses every edit cannot leave an empty file behind.
    """
    editor = neovim
    editor.apply_result = False
    scripted.script = [
        tool_call("write_file", path="pkg/new.py", content="x = 1\n"),
        tool_call("write_file", path="pkg/other.py", content="y = 2\n"),
        {"content": "done"},
    ]
    await editor.command("toolgate.ask", {"task": "create two files"})
    first = await editor.proposal()
    assert first["isNewFile"] is True
    assert not (repo / "pkg").exists()
    result = await editor.command("toolgate.acceptProposal", first["id"])
    assert result["status"] == "accepted"
    assert (repo / "pkg" / "new.py").read_text() == "x = 1\n"
    assert editor.edits == []
    second = await editor.proposal(2)
    await editor.command("toolgate.rejectProposal", second["id"], "not this one")
    assert (await editor.finished())["status"] == "incomplete"  # the last proposal was rejected
    assert not (repo / "pkg" / "other.py").exists()


async def test_a_new_file_open_in_a_client_that_cannot_create_files(
    neovim: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    """The buffer of a file not yet on disk takes the edit; the client's save creates the file."""
    editor = neovim
    uri = editor.open("fresh.py", "\n")  # Neovim's buffer of a missing file holds one newline
    scripted.script = [
        tool_call("write_file", path="fresh.py", content="z = 3\n"),
        {"content": "done"},
    ]
    await editor.command("toolgate.ask", {"task": "create it"})
    proposal = await editor.proposal()
    assert not (repo / "fresh.py").exists()
    result = await editor.command("toolgate.acceptProposal", proposal["id"])
    assert result["status"] == "accepted"
    assert editor.text(uri) == "z = 3\n"
    assert len(editor.edits) == 1 and editor.edits[0].edit.changes is not None
    assert (await editor.finished())["status"] == "completed"
