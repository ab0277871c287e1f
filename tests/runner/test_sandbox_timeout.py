"""A sandboxed test run that times out ends with its whole process tree, escapees included.

The tests start a child, a grandchild, and a daemon that leaves the process group and the
session (as a test server would); on the timeout not one of them may be left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from tests.support.processes import processes_with

from toolgate.runner.sandbox import SandboxSettings, bwrap_problem
from toolgate.testing.runner import run_pytest

needs_bwrap = pytest.mark.skipif(
    bwrap_problem() is not None, reason=f"no working bubblewrap here: {bwrap_problem()}"
)

# Each process sleeps with the marker in its command line, so the host can look for it.
HANGING_TEST = """
import os, subprocess, sys, time

MARKER = {marker!r}
SLEEP = f"import time; time.sleep(600)  # {{MARKER}}"


def test_hangs_with_a_tree_of_processes():
    child = subprocess.Popen([sys.executable, "-c",
        "import subprocess, sys, time; "
        f"subprocess.Popen([sys.executable, '-c', {{SLEEP!r}}]); "
        f"time.sleep(600)  # {{MARKER}}"])
    daemon = subprocess.Popen([sys.executable, "-c", SLEEP], start_new_session=True)
    with open("started.txt", "w") as handle:
        handle.write(f"{{child.pid}} {{daemon.pid}}")
    time.sleep(600)
"""


def _wait_gone(marker: str, seconds: float = 15.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@needs_bwrap
async def test_a_sandboxed_test_run_that_times_out_leaves_no_process(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    marker = f"toolgate-hang-{uuid.uuid4().hex}"
    (repo / "test_hang.py").write_text(HANGING_TEST.format(marker=marker))
    run = await run_pytest(
        repo,
        ["pytest", "-q", "-p", "no:cacheprovider"],
        timeout_seconds=8,
        sandbox=SandboxSettings(mode="required"),
    )
    try:
        assert run.sandboxed and run.timed_out, run.output
        # The tree was there: the test wrote down its child and daemon before hanging.
        assert (repo / "started.txt").read_text().strip(), "the test never started its processes"
        assert _wait_gone(marker) == [], "processes of the timed-out test run are still alive"
    finally:
        for pid in processes_with(marker):  # never leave one behind, even when failing
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
