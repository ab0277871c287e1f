"""Running the `toolgate` command in a subprocess, as a person would."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.scripted_model import ScriptedModel

# Runs the command on a machine without the embedded local model's runtime: a None entry in
# sys.modules makes importlib report the module as absent.
WITHOUT_LOCAL_RUNTIME = (
    "import sys; sys.modules['llama_cpp'] = None; from toolgate.cli import main; "
    "sys.exit(main(sys.argv[1:]))"
)


def toolgate(
    *args: str,
    without_local_runtime: bool = False,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m toolgate ARGS` with the test's environment (isolated user state)."""
    full = dict(os.environ)
    full["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # real pytest in workspaces, without our plugins
    full.update(env or {})
    head = ["-c", WITHOUT_LOCAL_RUNTIME] if without_local_runtime else ["-m", "toolgate"]
    return subprocess.run(
        [sys.executable, *head, *args],
        cwd=cwd,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full,
    )


def on_scripted(repo: Path, scripted: ScriptedModel) -> list[str]:
    """The flags that point a command at `repo` and the scripted model."""
    return ["--workspace", str(repo), "--base-url", scripted.base_url, "--model", scripted.model]


def toolgate_task(
    command: str, task: str, repo: Path, scripted: ScriptedModel, *extra: str, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """Run `toolgate COMMAND TASK` on `repo` against the scripted model (more flags in `extra`)."""
    return toolgate(command, task, *on_scripted(repo, scripted), *extra, **kwargs)


def too_late(body: dict[str, Any]) -> dict[str, Any]:
    """A scripted answer for a turn the test stops (Ctrl-C) long before it would come."""
    time.sleep(30)
    return {"content": "too late"}
