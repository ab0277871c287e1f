"""Whether a test run ran the tests, and when it did not, what happened, in words.

A run with no results (no pytest in the interpreter, a `conftest.py` that cannot import, a
path that does not exist), a run that collected no test (exit status 5) and a run that timed
out ran nothing one can call passed; every place that reports tests says so with these words.
"""

from __future__ import annotations

import re

from toolgate.testing.results import TestRun

# pytest's exit statuses for a session that ran its tests: all passed, some failed.
_RAN = (0, 1)
_INTERRUPTED = 2  # also what collection errors end with: those are failures, shown as such
_NO_TESTS = 5
_ERROR_PREFIX = re.compile(r"^E\s+")


def not_run_reason(run: TestRun) -> str | None:
    """Why the tests of `run` did not run (None when they did, passing or failing)."""
    if run.timed_out:
        return f"timed out after {run.timeout_seconds:g} s; its process group was killed"
    code = run.exit_code
    if code is None:
        # Never started (e.g. the sandbox is required and unavailable): the output says why.
        return _first_line(run.output) or "the test command could not be started"
    if not run.report_missing:
        if code in _RAN:
            return None
        counts = run.summary
        if code == _INTERRUPTED and (counts.errors or counts.failed or run.failures):
            return None
        if code == _NO_TESTS:
            return _nothing_collected(run)
    return _cause(run)


def _nothing_collected(run: TestRun) -> str:
    where = ", ".join(run.looked_in) or "."
    files = " or ".join(run.test_files) or "test_*.py or *_test.py"
    return f"no test was collected (pytest looked in {where} for files named {files})"


def _cause(run: TestRun) -> str:
    """What pytest's output says went wrong, with the interpreter or the exit status."""
    lines = [line.strip() for line in run.output.splitlines() if line.strip()]
    program = run.argv[0] if run.argv else "pytest"
    last = _ERROR_PREFIX.sub("", lines[-1]) if lines else ""
    if last.startswith(f"{program}: "):
        # The interpreter itself answered ("…/python3: No module named pytest").
        return f"{last[len(program) + 2 :][:300]} in {program}"
    heading = next((line for line in lines if "while loading conftest" in line), None)
    if heading is not None and heading != last:
        last = f"{heading.rstrip('.')}: {last}"
    if not last:
        return f"pytest gave no results (exit status {run.exit_code}) running {program}"
    return f"{last[:400]} (pytest exit status {run.exit_code})"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:500]
