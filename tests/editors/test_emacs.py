"""Emacs' own LSP client (eglot) with the configuration from docs/EDITORS.md, driven in batch mode.

Emacs starts `toolgate lsp`, the agent's edit is accepted from eglot's code-action menu and
applied by Emacs to its buffer (eglot asks its own "Proceed?" first), and a test run's failures
show up as Emacs diagnostics on the failing line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("drive_eglot.el")
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
TESTS = (
    "from calc import add, mul\n"
    "\n\n"
    "def test_add():\n"
    "    assert add(2, 3) == 5\n"
    "\n\n"
    "def test_mul():\n"
    '    assert mul(2, 3) == 6, "two times three"\n'
)
MUL_ASSERT_LINE = 9  # 1-based, as Emacs counts


def documented_config(base_url: str, model: str) -> str:
    """The elisp of docs/EDITORS.md's Emacs section, with this test's endpoint for OpenAI's."""
    doc = (ROOT / "docs" / "EDITORS.md").read_text()
    section = doc[doc.index("## Emacs (eglot)") :]
    section = section[: section.find("\n## ") if "\n## " in section else len(section)]
    blocks = re.findall(r"```elisp\n(.*?)```", section, re.S)
    assert blocks, "docs/EDITORS.md has no elisp block under its Emacs heading"
    elisp = "\n".join(blocks)
    assert "https://api.openai.com/v1" in elisp and "gpt-4o-mini" in elisp
    return elisp.replace("https://api.openai.com/v1", base_url).replace("gpt-4o-mini", model)


def test_emacs_eglot_reviews_an_edit_and_shows_test_failures(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    emacs = shutil.which("emacs")
    assert emacs, "Emacs is needed: run scripts/install-editor-test-deps.sh"
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        {"content": "add is fixed"},
    ]
    config = tmp_path / "toolgate.el"
    config.write_text(documented_config(scripted.base_url, scripted.model))
    out = tmp_path / "emacs.json"
    env = {
        **os.environ,
        # `toolgate` on PATH, as the documented configuration expects.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "emacs-home"),
        "TOOLGATE_EDITOR_CONFIG": str(config),
        "TOOLGATE_TEST_FILE": str(repo / "calc.py"),
        "TOOLGATE_TEST_TESTS": str(repo / "test_calc.py"),
        "TOOLGATE_TEST_OUT": str(out),
    }
    (tmp_path / "emacs-home").mkdir()
    result = subprocess.run(
        [emacs, "--batch", "-l", str(DRIVER)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(out.read_text())

    # The proposal reached Emacs' code-action menu, and the person's pick was applied by Emacs.
    assert any(t.startswith("Accept") and "edit_file" in t for t in seen["titles"])
    assert any(t.startswith("Reject") for t in seen["titles"])
    edit_questions = [q for q in seen["asked"] if "Server wants to edit" in q]
    assert len(edit_questions) == 1 and "calc.py" in edit_questions[0]
    assert seen["text"] == CALC.replace("a - b", "a + b")
    assert (repo / "calc.py").read_text() == CALC.replace("a - b", "a + b")  # saved by Emacs
    result_of_edit = last_tool_result(scripted.requests[-1])
    assert result_of_edit["success"] is True, result_of_edit

    # The person's test run: the one failure left is an Emacs diagnostic on its assert line.
    (failure,) = seen["diagnostics"]
    assert failure["line"] == MUL_ASSERT_LINE
    assert failure["type"] == "eglot-error"
    assert "two times three" in failure["text"]
