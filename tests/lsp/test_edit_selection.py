"""An edit asked on a selection: the code action any client shows, and the one-turn run it
starts on the lines as the person sees them, coming back as the usual proposal."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, tool_call

ON_DISK = "def add(a, b):\n    return a + b\n"
# The person typed mul and has not saved: the selection is of the buffer, not the disk.
IN_BUFFER = ON_DISK + "\n\ndef mul(a, b):\n    return a + b\n"


def user_text(scripted: ScriptedModel) -> str:
    """The person's words in the run's first request."""
    messages = scripted.requests[0]["messages"]
    return [m["content"] for m in messages if m["role"] == "user"][-1]


async def test_a_selection_offers_the_edit_and_the_run_sees_the_buffer(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "calc.py").write_text(ON_DISK)
    uri = editor.open("calc.py", IN_BUFFER)
    assert not [a for a in await editor.code_actions(uri, 4) if "Edit selection" in a["title"]]
    # Lines 5-6 (mul) selected as editors select whole lines: to the start of the line after.
    actions = await editor.code_actions(uri, 4, 6)
    (action,) = [a for a in actions if a["title"] == "Toolgate: Edit selection…"]
    assert action["kind"] == "refactor.rewrite"
    command = action["command"]
    assert command["command"] == "toolgate.editSelection"
    (arguments,) = command["arguments"]
    assert arguments["uri"] == uri and "instruction" not in arguments
    # The client adds the person's instruction (VS Code's input box, Neovim's vim.ui.input).
    scripted.script = [
        tool_call(
            "edit_file",
            path="calc.py",
            search="def mul(a, b):\n    return a + b",
            replace="def mul(a, b):\n    return a * b",
        ),
        {"content": "mul multiplies now."},
    ]
    await editor.command(
        "toolgate.editSelection", {**arguments, "instruction": "Make it multiply."}
    )
    proposal = await editor.proposal()
    await editor.command("toolgate.acceptProposal", proposal["id"])
    assert (await editor.finished())["status"] == "completed"
    asked = user_text(scripted)
    assert asked.startswith("Make it multiply.")
    assert "calc.py, lines 5-6" in asked
    assert "```\ndef mul(a, b):\n    return a + b\n```" in asked  # the unsaved lines, whole
    assert "def add" not in asked.split("```")[1]  # and only those
    assert editor.buffers[uri][0].endswith("def mul(a, b):\n    return a * b\n")


async def test_a_bad_selection_is_a_clear_error(editor: Editor, repo: Path, tmp_path: Path) -> None:
    (repo / "calc.py").write_text(ON_DISK)
    uri = uri_of(repo / "calc.py")
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}

    async def error(arguments: dict[str, object]) -> str:
        with pytest.raises(JsonRpcException) as caught:
            await editor.command("toolgate.editSelection", arguments)
        return str(caught.value)

    assert "toolgate.editSelection needs" in await error({"uri": uri, "range": whole})
    outside = {"uri": uri_of(tmp_path / "x.py"), "range": whole, "instruction": "x"}
    assert "uri is outside the workspace" in await error(outside)
    blank = {"start": {"line": 9, "character": 0}, "end": {"line": 12, "character": 0}}
    assert "the selection in calc.py holds no text" in await error(
        {"uri": uri, "range": blank, "instruction": "x"}
    )
