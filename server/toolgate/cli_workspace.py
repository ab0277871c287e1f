"""The workspace folder a command line works in, checked alike by every subcommand."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path


def workspace_root(given: str) -> Path | None:
    """`given` as an absolute folder, or None once stderr has said that it is not a folder."""
    root = Path(given).resolve()
    if not root.is_dir():
        print(f"toolgate: workspace {given!r} is not a folder", file=sys.stderr)
        return None
    return root


def listing_flags(
    command: argparse.ArgumentParser, subcommands: Iterable[argparse.ArgumentParser]
) -> None:
    """`--workspace` and `--json` on a command that lists, and again on each of its subcommands."""
    command.add_argument("--workspace", default=".", help="workspace root (default: .)")
    command.add_argument("--json", action="store_true", help="print as JSON")
    # SUPPRESS: a flag given before the subcommand is kept, not reset to the default.
    for parser in subcommands:
        parser.add_argument("--workspace", default=argparse.SUPPRESS, help="workspace root")
        parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
