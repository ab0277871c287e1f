"""Every proposal is reviewable from a generic client's code-action menu (Neovim's capabilities).

A proposal that creates a file is offered on the new file's buffer before the file exists on
disk, and any buffer offers "Review pending proposals (N)" entries that accept or reject each
pending proposal.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from tests.lsp.conftest import start_editor
from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

# What Neovim sends in `didOpen` for the empty buffer of a file not on disk: its one empty line
# and, 'eol' being set, a final newline.
NEOVIM_EMPTY = "\n"


@pytest_asyncio.fixture
async def neovim(repo: Path, options: dict[str, Any]) -> AsyncIterator[Editor]:
    ed = await start_editor(repo, options, "neovim")
    yield ed
    await ed.close()


@pytest.mark.parametrize(
    "buffer_open", ["before", "after", None], ids=["buffer-first", "buffer-later", "no-buffer"]
)
async def test_a_new_file_is_accepted_from_its_own_buffer_before_it_exists(
    neovim: Editor, scripted: ScriptedModel, repo: Path, buffer_open: str | None
) -> None:
    editor = neovim
    target = repo / "pkg" / "new_mod.py"
    uri = uri_of(target)
    if buffer_open:
        target.parent.mkdir()
    if buffer_open == "before":
        # `:edit pkg/new_mod.py` in Neovim: an empty buffer for a file that is not on disk
        # (in a folder that is, or the editor could not save it).
        editor.open("pkg/new_mod.py", text=NEOVIM_EMPTY)
    scripted.script = [
        tool_call("write_file", path="pkg/new_mod.py", content="VALUE = 1\n"),
        {"content": "created"},
    ]
    await editor.command("toolgate.ask", {"task": "create pkg/new_mod.py"})
    if buffer_open == "after":
        await editor.until(lambda: bool(editor.proposals))
        editor.open("pkg/new_mod.py", text=NEOVIM_EMPTY)
    actions = await editor.poll(lambda: editor.code_actions(uri))
    titles = [a["title"] for a in actions]
    assert titles == [
        "Accept write_file proposal: pkg/new_mod.py",
        "Reject write_file proposal: pkg/new_mod.py",
    ]
    assert not target.exists()
    accept = actions[0]["command"]
    result = await editor.command(accept["command"], *accept["arguments"])
    assert result["status"] == "accepted"
    assert (await editor.finished())["status"] == "completed"
    if buffer_open:
        assert editor.text(uri) == "VALUE = 1\n"
    assert target.read_text() == "VALUE = 1\n"
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is True and told["data"]["status"] == "accepted"


async def test_any_buffer_reviews_the_pending_proposals(
    neovim: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    editor = neovim
    readme = editor.open("README.md")
    scripted.script = [
        tool_call("write_file", path="notes/todo.md", content="- one\n"),
        tool_call("edit_file", path="README.md", search="Tiny", replace="Small"),
        {"content": "done"},
    ]
    await editor.command("toolgate.ask", {"task": "write notes, then rename"})

    # README.md has nothing pending of its own: it offers the review of the new file.
    actions = await editor.poll(lambda: editor.code_actions(readme))
    assert [a["title"] for a in actions] == [
        "Review pending proposals (1): accept write_file proposal: notes/todo.md",
        "Review pending proposals (1): reject write_file proposal: notes/todo.md",
    ]
    accept = actions[0]["command"]
    assert accept["command"] == "toolgate.acceptProposal"
    await editor.command(accept["command"], *accept["arguments"])
    assert (repo / "notes" / "todo.md").read_text() == "- one\n"

    # The edit of README.md: its own buffer offers accept / reject; another buffer the review.
    own = await editor.poll(lambda: editor.code_actions(readme))
    assert [a["title"].split()[0] for a in own] == ["Accept", "Reject"]
    todo = editor.open("notes/todo.md")
    review = await editor.code_actions(todo)
    assert [a["title"] for a in review] == [
        "Review pending proposals (1): accept edit_file proposal: README.md",
        "Review pending proposals (1): reject edit_file proposal: README.md",
    ]
    reject = review[1]["command"]
    assert (await editor.command(reject["command"], *reject["arguments"]))["status"] == "rejected"
    assert (await editor.finished())["status"] == "incomplete"  # its one change was refused
    assert await editor.code_actions(todo) == []
    assert (repo / "README.md").read_text() == "# Tiny project\n"
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is False and "rejected" in told["error"]
