"""Shared fixtures: isolated user state, a real git repository, the scripted model server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # so `tests.support` imports from any test folder

from tests.support.scripted_model import ScriptedModel  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_user_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads or writes the developer's own config, trust store or API keys."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TOOLGATE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    # The real pytest runs in the tests' workspaces (through language servers, commands and
    # runs alike) load only the plugins they name: this environment's own (pytest-lsp, xdist,
    # hypothesis, asyncio) would cost each of them seconds, and no workspace test uses them.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def git(root: Path, *args: str) -> str:
    """Run git in a repository and return its output."""
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one commit and a tiny Python project."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    git(root, "config", "commit.gpgsign", "false")
    (root / "README.md").write_text("# Tiny project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def scripted() -> Iterator[ScriptedModel]:
    """A scripted OpenAI-compatible server; fill `scripted.script` in the test."""
    with ScriptedModel() as server:
        yield server
