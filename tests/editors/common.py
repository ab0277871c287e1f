"""What the editor tests share: the project, the documented configuration, the environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.scripted_model import ScriptedModel, tool_call

ROOT = Path(__file__).resolve().parents[2]
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
FIXED = CALC.replace("a - b", "a + b")
TESTS = (
    "from calc import add, mul\n"
    "\n\n"
    "def test_add():\n"
    "    assert add(2, 3) == 5\n"
    "\n\n"
    "def test_mul():\n"
    '    assert mul(2, 3) == 6, "two times three"\n'
)
MUL_ASSERT_LINE = 9  # 1-based, as editors count: the one failure left after the agent's fix
MUL_RETURN_LINE = 6  # 1-based: the line the model's review comments on
REVIEW_COMMENT = "mul adds instead of multiplying."


def review_verdict() -> dict[str, str]:
    """The model's review of the fixed project: one error, with a suggestion, on mul's return."""
    comment = {
        "path": "calc.py",
        "line": MUL_RETURN_LINE,
        "severity": "error",
        "message": REVIEW_COMMENT,
        "suggestion": "    return a * b",
    }
    return {"content": json.dumps({"approved": False, "comments": [comment]})}


def make_project(repo: Path, scripted: ScriptedModel) -> None:
    """Two bugs and their tests; the scripted agent fixes one of them with an edit.

    The model's third answer is its review of the changes, asked for after the run.
    """
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        {"content": "add is fixed"},
        review_verdict(),
    ]


def documented_config(heading: str, language: str, scripted: ScriptedModel) -> str:
    """The code blocks of one docs/EDITORS.md section, with the test's endpoint for OpenAI's."""
    doc = (ROOT / "docs" / "EDITORS.md").read_text()
    section = doc[doc.index(f"## {heading}\n") :]
    end = section.find("\n## ", 1)
    blocks = re.findall(rf"```{language}\n(.*?)```", section[: end if end > 0 else None], re.S)
    assert blocks, f"docs/EDITORS.md has no {language} block under '## {heading}'"
    code = "\n".join(blocks)
    assert "https://api.openai.com/v1" in code and "gpt-4o-mini" in code
    return code.replace("https://api.openai.com/v1", scripted.base_url).replace(
        "gpt-4o-mini", scripted.model
    )


def drive(argv: list[str], repo: Path, home: Path, **extra: str) -> dict[str, Any]:
    """Run an editor's driver in the project; what it saw, from the JSON file it writes.

    The editor gets `toolgate` on PATH (as the configurations expect), its own HOME, and the
    files to open and the output file in TOOLGATE_TEST_* variables.
    """
    home.mkdir(exist_ok=True)
    out = home / "seen.json"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "TOOLGATE_TEST_FILE": str(repo / "calc.py"),
        "TOOLGATE_TEST_TESTS": str(repo / "test_calc.py"),
        "TOOLGATE_TEST_OUT": str(out),
        **extra,
    }
    result = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    seen: dict[str, Any] = json.loads(out.read_text())
    return seen
