"""Process helpers for tests."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
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


def processes() -> Iterator[tuple[int, bytes]]:
    """Every process now running: its id and its command line (NUL-separated)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # it ended while we looked
        yield int(entry.name), cmdline


def parent_of(pid: int) -> int | None:
    """The parent process's id, or None when the process has ended."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def processes_with(marker: str) -> list[int]:
    """The live processes whose command line holds `marker` (a word only the test put there)."""
    return [pid for pid, cmdline in processes() if marker.encode() in cmdline and alive(pid)]


def slow_test(repo: Path) -> Path:
    """Write a test into `repo` that beats into a file every 0.1 s for two minutes.

    Answers the heartbeat file: it exists once pytest runs the test, and stops growing when
    that pytest is ended (whose pid may be in another namespace, so the file tells instead).
    """
    beats = repo / "beats.txt"
    (repo / "test_slow.py").write_text(
        "import pathlib, time\n\n\n"
        "def test_slow():\n"
        "    for _ in range(1200):\n"
        f"        with pathlib.Path({str(beats)!r}).open('a') as beat:\n"
        "            beat.write('.')\n"
        "        time.sleep(0.1)\n"
    )
    return beats


async def assert_stopped(beats: Path) -> None:
    """The slow test's heartbeat has stopped (a second to end it, then a second of quiet)."""
    await asyncio.sleep(1.0)
    stopped_at = beats.stat().st_size
    await asyncio.sleep(1.0)  # ten beats, had it gone on
    assert beats.stat().st_size == stopped_at, "the test run goes on"
