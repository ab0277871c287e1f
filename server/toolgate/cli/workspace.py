"""The workspace folder a command line works in, checked alike by every subcommand."""

from __future__ import annotations

import sys
from pathlib import Path


def workspace_root(given: str) -> Path | None:
    """`given` as an absolute folder, or None once stderr has said that it is not a folder."""
    root = Path(given).resolve()
    if not root.is_dir():
        print(f"toolgate: workspace {given!r} is not a folder", file=sys.stderr)
        return None
    return root
