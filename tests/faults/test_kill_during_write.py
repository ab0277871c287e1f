"""SIGKILL during a large atomic write: the target is always the old or the new file, and
nothing else is left behind (the unnamed-file path), or the next start sweeps it (the named
fallback)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolgate.workspace import Workspace
from toolgate.workspace.files import TEMP_MARK, atomic_write_bytes

SIZE = 24 * 1024 * 1024
KILLS = 16

# The child writes the target again and again, alternating two contents, until it is killed.
_CHILD = r"""
import os, sys
from pathlib import Path
if sys.argv[3] == "named":
    del os.O_TMPFILE  # the fallback: a named temporary file renamed over the target
from toolgate.workspace.files import atomic_write_bytes
target = Path(sys.argv[1])
size = int(sys.argv[2])
contents = [b"a" * size, b"b" * size]
print("ready", flush=True)
i = 0
while True:
    atomic_write_bytes(target, contents[i % 2])
    i += 1
"""


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_duration(folder: Path) -> float:
    """How long one write of SIZE bytes takes here, so kills can land across it."""
    probe = folder / "probe.bin"
    start = time.perf_counter()
    atomic_write_bytes(probe, b"c" * SIZE)
    duration = time.perf_counter() - start
    probe.unlink()
    return duration


def _kill_at(target: Path, mode: str, delay: float) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(target), str(SIZE), mode],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(delay)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)


@pytest.mark.parametrize("mode", ["unnamed", "named"])
def test_kill_during_writes_leaves_old_or_new(tmp_path: Path, mode: str) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    target = folder / "big.bin"
    original = b"o" * 1024
    target.write_bytes(original)
    allowed = {_digest(original), _digest(b"a" * SIZE), _digest(b"b" * SIZE)}
    one_write = _write_duration(folder)
    stray_seen = 0
    for kill in range(KILLS):
        # Spread the kills over the first write and the ones after it.
        delay = (kill / KILLS) * 3 * one_write
        _kill_at(target, mode, delay)
        assert _digest(target.read_bytes()) in allowed, f"kill {kill}: a half-written target"
        others = sorted(p.name for p in folder.iterdir() if p.name != "big.bin")
        if mode == "unnamed":
            assert others == [], f"kill {kill} after {delay:.3f}s left {others}"
        else:
            assert all(name.endswith(TEMP_MARK) for name in others), others
            stray_seen += len(others)
            # The next start in the workspace sweeps what a dead writer left.
            Workspace(folder)
            from toolgate.workspace import sandbox

            sandbox._SWEPT.discard(folder.resolve())
            Workspace(folder)
            left = sorted(p.name for p in folder.iterdir() if p.name != "big.bin")
            assert left == [], f"kill {kill}: the sweep left {left}"
    print(f"{mode}: {KILLS} kills, stray named files swept: {stray_seen}")


def test_sweep_leaves_a_live_writers_file(tmp_path: Path) -> None:
    mine = tmp_path / f".a.txt.{os.getpid()}.0000{TEMP_MARK}"
    dead_pid = 2**22 + 12345  # above pid_max's default: no such process
    theirs = tmp_path / f".b.txt.{dead_pid}.0000{TEMP_MARK}"
    mine.write_bytes(b"x")
    theirs.write_bytes(b"x")
    (tmp_path / ".git").mkdir()
    in_git = tmp_path / ".git" / f".c.{dead_pid}.0000{TEMP_MARK}"
    in_git.write_bytes(b"x")
    from toolgate.workspace.files import sweep_temporaries

    removed = sweep_temporaries(tmp_path)
    assert removed == [theirs]
    assert mine.exists() and in_git.exists() and not theirs.exists()


def test_new_and_replaced_files_keep_modes(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_bytes(b"#!/bin/sh\n")
    script.chmod(0o750)
    atomic_write_bytes(script, b"#!/bin/sh\necho hi\n")
    assert script.stat().st_mode & 0o777 == 0o750
    assert script.read_bytes() == b"#!/bin/sh\necho hi\n"
    fresh = tmp_path / "deep" / "new.txt"
    atomic_write_bytes(fresh, b"new\n")
    assert fresh.read_bytes() == b"new\n"
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "run.sh"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
