"""Process helpers for tests."""

from __future__ import annotations

import os
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether a process with this id is running; a zombie waiting to be reaped has ended."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except (OSError, IndexError):
        return False  # it ended between the two looks
    return state != "Z"


def processes_with(marker: str) -> list[int]:
    """The live processes whose command line holds `marker` (a word only the test put there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # it ended while we looked
        if marker.encode() in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found
