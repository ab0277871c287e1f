"""The records of a test run: its summary, and each failure with the line where it happened."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolgate.runner.output import cap_output

# pytest's own text of one failure, as kept on the record.
MAX_LONGREPR_BYTES = 4096

# The assertion message shown in a diagnostic: its first lines only.
MAX_MESSAGE_LINES = 6


@dataclass
class Frame:
    """One traceback frame; `file` is workspace-relative POSIX when inside, else absolute."""

    file: str
    line: int
    name: str


@dataclass
class TestFailure:
    """A failed test or an error, located at the failing line inside the test's own file.

    `file`/`line` (1-based) point at the assertion or the raising line in the test file — the
    deepest traceback entry in that file; `frames` are the other traceback frames, outermost
    first (including those in the source files under test); `kind` is "failed" or "error"
    (a collection, setup or teardown error).
    """

    __test__ = False  # not a test class, whatever pytest thinks of its name

    test_id: str
    file: str
    line: int
    message: str
    frames: list[Frame] = field(default_factory=list)
    longrepr: str = ""
    kind: str = "failed"


@dataclass
class TestSummary:
    """Counts of a test run, the way pytest's summary line counts them."""

    __test__ = False

    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    duration_seconds: float = 0.0


@dataclass
class TestRun:
    """One pytest run: how it ended, its counts, its failures and its (capped) output."""

    __test__ = False

    argv: list[str]
    exit_code: int | None
    summary: TestSummary
    failures: list[TestFailure]
    output: str
    output_truncated: bool
    output_size_bytes: int
    timed_out: bool
    report_missing: bool
    sandboxed: bool = False
    sandbox_note: str | None = None
    timeout_seconds: float = 0.0  # the limit it ran under
    # Where pytest collected from and the file names it takes for tests (from its report).
    looked_in: list[str] = field(default_factory=list)
    test_files: list[str] = field(default_factory=list)

    def to_data(self) -> dict[str, Any]:
        """The JSON-able shape a tool result carries."""
        return {
            "exit_code": self.exit_code,
            "summary": asdict(self.summary),
            "failures": [asdict(failure) for failure in self.failures],
            "output": self.output,
            "timed_out": self.timed_out,
            "report_missing": self.report_missing,
            "sandboxed": self.sandboxed,
        }


Realpath = Callable[[str], str]


def workspace_path(path: str, root: Path, realpath: Realpath = os.path.realpath) -> str:
    """`path` relative to `root` in POSIX form when it lies inside it, else absolute.

    `realpath` may be a cached `os.path.realpath` when many paths of one run are converted.
    """
    if not path:
        return path
    real = realpath(path)
    real_root = realpath(str(root))
    try:
        inside = os.path.commonpath([real, real_root]) == real_root
    except ValueError:
        inside = False
    if not inside:
        return real
    return Path(os.path.relpath(real, real_root)).as_posix()


def _message(text: Any) -> str:
    lines = str(text or "").strip().splitlines()
    return "\n".join(lines[:MAX_MESSAGE_LINES])


def _line(value: Any) -> int:
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 1


def failure_from_report(
    entry: dict[str, Any], root: Path, realpath: Realpath = os.path.realpath
) -> TestFailure:
    """A TestFailure from one failure entry of the plugin's JSON report."""
    frames = [
        Frame(
            file=workspace_path(str(frame.get("file", "")), root, realpath),
            line=_line(frame.get("line")),
            name=str(frame.get("name") or ""),
        )
        for frame in entry.get("frames") or []
        if isinstance(frame, dict)
    ]
    longrepr, _, _ = cap_output(str(entry.get("longrepr") or ""), MAX_LONGREPR_BYTES)
    return TestFailure(
        test_id=str(entry.get("test_id", "")),
        file=workspace_path(str(entry.get("file", "")), root, realpath),
        line=_line(entry.get("line")),
        message=_message(entry.get("message")),
        frames=frames,
        longrepr=longrepr,
        kind="failed" if entry.get("kind") == "failed" else "error",
    )


def summary_from_report(data: dict[str, Any]) -> TestSummary:
    """A TestSummary from the plugin's JSON report."""
    counts = data.get("summary") or {}

    def count(name: str) -> int:
        try:
            return int(counts.get(name, 0))
        except (TypeError, ValueError):
            return 0

    return TestSummary(
        total=count("total"),
        passed=count("passed"),
        failed=count("failed"),
        skipped=count("skipped"),
        errors=count("errors"),
        duration_seconds=float(data.get("duration_seconds") or 0.0),
    )
