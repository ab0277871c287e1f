"""The demo: a throw-away project, one small task, every step shown."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

DEMO_TASK = (
    'The test fails because greet() in greet.py returns "Hello Ada" instead of "Hello, Ada!". '
    'Step 1: call edit_file with path "greet.py", search "\\"Hello \\" + name" and replace '
    '"\\"Hello, \\" + name + \\"!\\"". '
    "Step 2: call run_tests. "
    'Step 3: call git_add with files ["greet.py"]. '
    'Step 4: call git_commit with message "Fix the greeting". '
    "One tool block per answer."
)

FILES = {
    "README.md": "# greet\n\nA tiny project for the Toolgate demo.\n",
    "greet.py": 'def greet(name):\n    """Return a friendly greeting."""\n'
    '    return "Hello " + name\n',
    "test_greet.py": "from greet import greet\n\n\ndef test_greet():\n"
    '    assert greet("Ada") == "Hello, Ada!"\n',
}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def git_project(
    files: dict[str, str], *, prefix: str, message: str, parent: Path | None = None
) -> Path:
    """A fresh git repository in a new temporary folder, with `files` in one commit."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "demo@toolgate.invalid")
    _git(root, "config", "user.name", "Toolgate demo")
    _git(root, "config", "commit.gpgsign", "false")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", message)
    return root


def make_workspace(parent: Path | None = None) -> Path:
    """Create the demo project as a real git repository with one commit."""
    return git_project(
        FILES, prefix="toolgate-demo-", message="A greeting with a failing test", parent=parent
    )


def summary(root: Path) -> str:
    """What the demo left behind: the commits and the state of the tree."""
    log = _git(root, "log", "--oneline", "--no-decorate").strip()
    status = _git(root, "status", "--short").strip() or "(clean)"
    return f"git log:\n{log}\n\ngit status:\n{status}\n\ngreet.py now:\n" + (
        root / "greet.py"
    ).read_text(encoding="utf-8")
