"""Emacs' own LSP client (eglot) with the configuration from docs/EDITORS.md, in batch mode.

Emacs starts `toolgate lsp`, the agent's edit is accepted from eglot's code-action menu and
applied by Emacs to its buffer (eglot asks its own "Proceed?" first), and a test run's failures
show up as Flymake diagnostics on the failing line; `toolgate-review`'s comments show up there too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.editors.common import (
    CALC,
    FIXED,
    MUL_ASSERT_LINE,
    MUL_RETURN_LINE,
    REVIEW_COMMENT,
    documented_config,
    drive,
    make_project,
)
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

DRIVER = Path(__file__).with_name("drive_eglot.el")


def test_emacs_eglot_reviews_an_edit_and_shows_test_failures(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    emacs = shutil.which("emacs")
    assert emacs, "Emacs is needed: run scripts/install-editor-test-deps.sh"
    make_project(repo, scripted)
    config = tmp_path / "toolgate.el"
    config.write_text(documented_config("Emacs (eglot)", "elisp", scripted))
    seen = drive(
        [emacs, "--batch", "-l", str(DRIVER)],
        repo,
        tmp_path / "emacs-home",
        TOOLGATE_EDITOR_CONFIG=str(config),
    )

    # The proposal reached Emacs' code-action menu, and the person's pick was applied by Emacs.
    assert any(t.startswith("Accept") and "edit_file" in t for t in seen["titles"])
    assert any(t.startswith("Reject") for t in seen["titles"])
    edit_questions = [q for q in seen["asked"] if "Server wants to edit" in q]
    assert len(edit_questions) == 1 and "calc.py" in edit_questions[0]
    assert seen["text"] == FIXED
    assert (repo / "calc.py").read_text() == FIXED  # saved by Emacs
    run_end, review_request = scripted.requests[1:]
    result_of_edit = last_tool_result(run_end)
    assert result_of_edit["success"] is True, result_of_edit

    # The person's test run: the one failure left is a diagnostic on its assert line.
    (failure,) = seen["diagnostics"]
    assert failure["line"] == MUL_ASSERT_LINE
    assert failure["type"] == "eglot-error"
    assert "two times three" in failure["text"]

    # `toolgate-review`: the model saw the accepted change, and its comment is on its line.
    assert "    2 +     return a + b" in review_request["messages"][1]["content"]
    (comment,) = seen["review"]
    assert comment["line"] == MUL_RETURN_LINE
    assert comment["type"] == "eglot-error"
    assert REVIEW_COMMENT in comment["text"] and "return a * b" in comment["text"]


def test_emacs_tells_the_agent_what_flymake_reports_after_its_change(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    """Eglot serves Toolgate; Flymake's Python checker (pyflakes) runs beside it. The
    documented configuration reports what it says before and after the accepted change, and
    the model reads the new problem only."""
    emacs = shutil.which("emacs")
    assert emacs, "Emacs is needed: run scripts/install-editor-test-deps.sh"
    (repo / "calc.py").write_text("import os\n\n\n" + CALC)
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + c"),
        {"content": "add uses c now"},
    ]
    config = tmp_path / "toolgate.el"
    config.write_text(documented_config("Emacs (eglot)", "elisp", scripted))
    seen = drive(
        [emacs, "--batch", "-l", str(DRIVER)],
        repo,
        tmp_path / "emacs-home",
        TOOLGATE_EDITOR_CONFIG=str(config),
        TOOLGATE_TEST_SCENARIO="problems",
    )

    assert seen["before"] == [{"line": 1, "text": "'os' imported but unused"}]
    assert {"line": 5, "text": "undefined name 'c'"} in seen["after"]
    told = last_tool_result(scripted.requests[1])
    assert told["success"] is True, told
    # the unused import was there before the change: only the undefined name is its doing
    assert told["data"]["note"] == (
        "new problems after this change: calc.py:5 python-flymake undefined name 'c'"
    )
