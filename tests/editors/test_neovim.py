"""Neovim's own LSP client with the 0.7-to-0.10 configuration from docs/EDITORS.md, headless.

Neovim starts `toolgate lsp`, the agent's edit is accepted from `vim.lsp.buf.code_action()`'s
menu and applied by Neovim to its buffer, and a test run's failures show up as diagnostics on
the failing line.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.editors.common import (
    FIXED,
    MUL_ASSERT_LINE,
    documented_config,
    drive,
    make_project,
)
from tests.support.scripted_model import ScriptedModel, last_tool_result

DRIVER = Path(__file__).with_name("drive_neovim.lua")
ERROR = 1  # vim.diagnostic.severity.ERROR


def test_neovim_reviews_an_edit_and_shows_test_failures(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    nvim = shutil.which("nvim")
    assert nvim, "Neovim is needed: run scripts/install-editor-test-deps.sh"
    make_project(repo, scripted)
    config = tmp_path / "toolgate.lua"
    config.write_text(documented_config("Neovim (0.7 to 0.10)", "lua", scripted))
    home = tmp_path / "nvim-home"
    seen = drive(
        [nvim, "--headless", "-n", "-i", "NONE", "-u", str(config), "-c", f"luafile {DRIVER}"],
        repo,
        home,
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
    )

    # The proposal was in Neovim's code-action menu, and the person's pick was applied by Neovim.
    assert any(t.startswith("Accept") and "edit_file" in t for t in seen["menu"])
    assert any(t.startswith("Reject") for t in seen["menu"])
    assert seen["text"] == FIXED
    assert (repo / "calc.py").read_text() == FIXED  # written by Neovim
    assert any("proposes edit_file" in n for n in seen["notices"])  # the config's handlers
    assert any(n.startswith("Toolgate run completed") for n in seen["notices"])
    result_of_edit = last_tool_result(scripted.requests[-1])
    assert result_of_edit["success"] is True, result_of_edit

    # The person's test run: the one failure left is a diagnostic on its assert line.
    (failure,) = seen["diagnostics"]
    assert failure["line"] == MUL_ASSERT_LINE
    assert failure["severity"] == ERROR
    assert "two times three" in failure["message"]
