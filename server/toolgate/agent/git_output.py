"""git run to read the workspace, never to change it: its output, or None when git cannot say."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git_output(root: Path, *args: str) -> bytes | None:
    """The standard output of `git ARGS` in `root`; None when git is missing or fails."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            # no index refresh written behind the person's back, and messages in one language
            env={**os.environ, "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None
