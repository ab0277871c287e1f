"""Neovim's own LSP client with the 0.7-to-0.10 configuration from docs/EDITORS.md, headless.

Neovim starts `toolgate lsp`, the agent's edit is accepted from `vim.lsp.buf.code_action()`'s
menu and applied by Neovim to its buffer, and a test run's failures show up as diagnostics on
the failing line; so do the comments of `:ToolgateReview`. A proposal that creates a file is
accepted from the new file's buffer before the file exists, and from another buffer through
"Review pending proposals (N)".
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.editors.common import (
    CALC,
    FIXED,
    MUL_ASSERT_LINE,
    MUL_RETURN_LINE,
    REVIEW_COMMENT,
    TESTS,
    documented_config,
    drive,
    make_project,
)
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

DRIVER = Path(__file__).with_name("drive_neovim.lua")
# For the second language server: one problem (pyflakes') before the agent's change.
PROBLEMS_BEFORE = "import os\n\n\n" + CALC
ERROR = 1  # vim.diagnostic.severity.ERROR


def _drive_neovim(
    repo: Path, scripted: ScriptedModel, tmp_path: Path, **scenario: str
) -> dict[str, Any]:
    """Neovim headless with the documented configuration, running the driver's scenario."""
    nvim = shutil.which("nvim")
    assert nvim, "Neovim is needed: run scripts/install-editor-test-deps.sh"
    config = tmp_path / "toolgate.lua"
    config.write_text(documented_config("Neovim (0.7 to 0.10)", "lua", scripted))
    home = tmp_path / "nvim-home"
    return drive(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", str(config), "-c", f"luafile {DRIVER}"],
        repo,
        home,
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        **scenario,
    )


def test_neovim_reviews_an_edit_and_shows_test_failures(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    make_project(repo, scripted)
    seen = _drive_neovim(repo, scripted, tmp_path)

    # The proposal was in Neovim's code-action menu, and the person's pick was applied by Neovim.
    assert any(t.startswith("Accept") and "edit_file" in t for t in seen["menu"])
    assert any(t.startswith("Reject") for t in seen["menu"])
    assert seen["text"] == FIXED
    assert (repo / "calc.py").read_text() == FIXED  # written by Neovim
    assert any("proposes edit_file" in n for n in seen["notices"])  # the config's handlers
    assert any(n.startswith("Toolgate run completed") for n in seen["notices"])
    run_end, review_request = scripted.requests[1:]
    result_of_edit = last_tool_result(run_end)
    assert result_of_edit["success"] is True, result_of_edit

    # The person's test run: the one failure left is a diagnostic on its assert line.
    (failure,) = seen["diagnostics"]
    assert failure["line"] == MUL_ASSERT_LINE
    assert failure["severity"] == ERROR
    assert "two times three" in failure["message"]

    # `:ToolgateReview`: the model saw the accepted change, and its comment is on its line.
    assert "    2 +     return a + b" in review_request["messages"][1]["content"]
    (comment,) = seen["review"]
    assert comment["line"] == MUL_RETURN_LINE
    assert comment["severity"] == ERROR
    assert comment["message"].startswith(REVIEW_COMMENT) and "return a * b" in comment["message"]
    assert "not approved: 1 error" in seen["review_answer"]


def test_neovim_accepts_new_files_from_their_own_buffer_and_from_another(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    """A new file: accepted on its buffer before it exists, and via the review entries."""
    make_project(repo, scripted)
    (repo / "pkg").mkdir()  # `:edit pkg/new_mod.py` then `:write` needs the folder
    scripted.script = [
        tool_call("write_file", path="pkg/new_mod.py", content="VALUE = 1\n"),
        tool_call("write_file", path="notes/todo.md", content="- one\n"),
        {"content": "created both"},
    ]
    seen = _drive_neovim(
        repo,
        scripted,
        tmp_path,
        TOOLGATE_TEST_SCENARIO="new_file",
        TOOLGATE_TEST_NEW=str(repo / "pkg" / "new_mod.py"),
        TOOLGATE_TEST_NEXT="notes/todo%.md",  # a Lua pattern
    )

    # The new file's own buffer offered it before the file existed; Neovim wrote what landed.
    assert seen["existed_before_accept"] is False
    assert "Accept write_file proposal: pkg/new_mod.py" in seen["own_menu"]
    assert seen["new_text"] == "VALUE = 1\n"
    assert (repo / "pkg" / "new_mod.py").read_text() == "VALUE = 1\n"
    # calc.py's buffer had nothing of its own pending: its menu reviewed the next new file.
    assert seen["menu"] == [
        "Review pending proposals (1): accept write_file proposal: notes/todo.md",
        "Review pending proposals (1): reject write_file proposal: notes/todo.md",
    ]
    assert (repo / "notes" / "todo.md").read_text() == "- one\n"
    assert any(n.startswith("Toolgate run completed") for n in seen["notices"])
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is True and told["data"]["status"] == "accepted", told


@pytest.mark.parametrize("saves", [True, False], ids=["documented", "without-save-handler"])
def test_neovim_runs_a_new_test_file_it_accepted_without_saving(
    saves: bool, repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    """The agent fixes calc.py and writes test_calc.py; both are accepted in Neovim's buffers
    and nothing is saved by hand: the tests run against both, and the failure the new file
    holds is a diagnostic in its buffer."""
    (repo / "calc.py").write_text(CALC)
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        # As models often write it: without a final newline, which Neovim shows with one.
        tool_call("write_file", path="test_calc.py", content=TESTS.rstrip("\n")),
        tool_call("run_tests"),
        {"content": "add is fixed; mul still fails its test"},
    ]
    seen = _drive_neovim(
        repo,
        scripted,
        tmp_path,
        TOOLGATE_TEST_SCENARIO="new_test",
        TOOLGATE_TEST_NO_SAVE="0" if saves else "1",
    )

    # Both accepted changes were on disk when the tests ran: saved by Neovim when it answers
    # the server's request to save (its buffer, with the final newline it shows), else written
    # by the server as accepted, though Neovim reports the buffer with a newline more.
    assert (repo / "calc.py").read_text() == FIXED
    assert (repo / "test_calc.py").read_text() == (TESTS if saves else TESTS.rstrip("\n"))
    told = last_tool_result(scripted.requests[3])
    assert told["success"] is True, told
    assert told["data"]["summary"]["passed"] == 1 and told["data"]["summary"]["failed"] == 1
    assert not told["data"].get("notes"), told["data"]["notes"]
    # The failure the new file holds is a diagnostic in its buffer, on its assert line.
    (failure,) = seen["diagnostics"]
    assert failure["line"] == MUL_ASSERT_LINE and failure["severity"] == ERROR
    assert "two times three" in failure["message"]
    assert seen["new_text"] == TESTS
    assert any(n.startswith("Toolgate run completed") for n in seen["notices"])


def test_neovim_tells_the_agent_what_another_language_server_reports_after_its_change(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    """pylsp checks the file beside Toolgate; the documented configuration reports what it
    says before and after the accepted change, and the model reads the new problem only."""
    (repo / "calc.py").write_text(PROBLEMS_BEFORE)
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + c"),
        {"content": "add uses c now"},
    ]
    seen = _drive_neovim(repo, scripted, tmp_path, TOOLGATE_TEST_SCENARIO="problems")

    assert seen["before"] == [{"line": 1, "message": "'os' imported but unused"}]
    assert {"line": 5, "message": "undefined name 'c'"} in seen["after"]
    told = last_tool_result(scripted.requests[1])
    assert told["success"] is True, told
    # the unused import was there before the change: only the undefined name is its doing
    assert told["data"]["note"] == (
        "new problems after this change: calc.py:5 pyflakes undefined name 'c'"
    )
