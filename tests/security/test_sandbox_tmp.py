"""The sandbox's private /tmp must not hide what the command runs with.

A fresh clone, and its virtual environment, can live under /tmp; the sandbox replaces /tmp with
an empty folder, so the environment and Toolgate's own files are bound back read-only.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolgate.runner.sandbox import (
    SandboxSettings,
    bwrap_problem,
    hidden_by_private_tmp,
    sandbox_command,
)

needs_bwrap = pytest.mark.skipif(
    bwrap_problem() is not None, reason=f"no working bubblewrap here: {bwrap_problem()}"
)


def _venv_with_marker(folder: Path) -> Path:
    """A real virtual environment under `folder` whose site-packages holds one module."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    found = list(folder.glob("lib/python*/site-packages"))
    assert found, "the virtual environment has no site-packages"
    (found[0] / "toolgate_env_marker.py").write_text("WHERE = 'the environment'\n")
    return folder / "bin" / "python"


def test_an_environment_under_tmp_is_named_and_the_workspace_is_not(tmp_path: Path) -> None:
    assert str(tmp_path.resolve()).startswith("/tmp/"), "pytest's temporary folders are in /tmp"
    python = _venv_with_marker(tmp_path / "env")
    workspace = tmp_path / "project"
    workspace.mkdir()
    named = hidden_by_private_tmp([str(python), "-c", "pass"], workspace)
    assert (tmp_path / "env").resolve() in named
    inside = workspace / ".venv"
    inside.mkdir()
    assert inside.resolve() not in hidden_by_private_tmp(
        [str(inside / "bin" / "python")], workspace
    )


@needs_bwrap
def test_a_command_whose_environment_lives_under_tmp_runs_in_the_sandbox(tmp_path: Path) -> None:
    python = _venv_with_marker(tmp_path / "env")
    workspace = tmp_path / "project"
    workspace.mkdir()
    wrapped = sandbox_command(
        [str(python), "-c", "import toolgate_env_marker as m; print(m.WHERE)"],
        settings=SandboxSettings(mode="required"),
        root=workspace,
        cwd=workspace,
    )
    assert wrapped.active
    done = subprocess.run(wrapped.argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the environment"
    # The environment is read-only inside: the command cannot change what it runs with.
    write = sandbox_command(
        [str(python), "-c", f"open({str(tmp_path / 'env' / 'x')!r}, 'w')"],
        settings=SandboxSettings(mode="required"),
        root=workspace,
        cwd=workspace,
    )
    refused = subprocess.run(write.argv, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    assert not (tmp_path / "env" / "x").exists()


def test_a_pythonpath_entry_under_tmp_is_bound_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A system Python run with packages from a folder under /tmp finds them in the sandbox."""
    packages = tmp_path / "packages"
    packages.mkdir()
    workspace = tmp_path / "project"
    workspace.mkdir()
    argv = ["/usr/bin/env", "python3", "-c", "pass"]
    assert packages.resolve() not in hidden_by_private_tmp(argv, workspace)
    monkeypatch.setenv("PYTHONPATH", f"{packages}:{workspace}")
    named = hidden_by_private_tmp(argv, workspace)
    assert packages.resolve() in named and workspace.resolve() not in named
