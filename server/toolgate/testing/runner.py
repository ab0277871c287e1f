"""Running pytest with a small report plugin, so results come from pytest itself, not its text."""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from toolgate.runner.process import resolve_executable, run_process
from toolgate.runner.sandbox import SandboxSettings
from toolgate.testing.results import (
    TestRun,
    TestSummary,
    failure_from_report,
    summary_from_report,
)

PLUGIN_DIR = Path(__file__).resolve().parent / "pytest_plugin"
PLUGIN_MODULE = "toolgate_pytest_report"
REPORT_ENV_VAR = "TOOLGATE_PYTEST_REPORT"
WORKSPACE_ENV_VAR = "TOOLGATE_PYTEST_WORKSPACE"

_PYTEST_NAMES = ("pytest", "py.test")

_DEFAULT_SANDBOX = SandboxSettings()


def pytest_head_length(argv: list[str]) -> int:
    """How many leading tokens of argv name pytest itself (0 when argv does not run pytest)."""
    if not argv:
        return 0
    if os.path.basename(argv[0]) in _PYTEST_NAMES:
        return 1
    # `python … -m pytest`: the interpreter, its own options, then the module.
    for index in range(1, len(argv) - 1):
        if argv[index] == "-m":
            return index + 2 if argv[index + 1] == "pytest" else 0
        if not argv[index].startswith("-"):
            return 0
    return 0


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _python_path() -> str:
    existing = os.environ.get("PYTHONPATH")
    return str(PLUGIN_DIR) + (os.pathsep + existing if existing else "")


async def run_pytest(
    root: Path,
    argv: list[str],
    *,
    cwd: Path | None = None,
    timeout_seconds: float = 300,
    max_output_bytes: int = 64_000,
    sandbox: SandboxSettings | None = _DEFAULT_SANDBOX,
) -> TestRun:
    """Run a pytest command in the workspace `root` and return its structured results.

    `argv` is the already split and already allowed command (`pytest …`, `python -m pytest …`).
    'python'/'pytest' resolve to the workspace's own environment first. The report plugin is
    added with `-p`; failure paths come back relative to `root`. When no report was written
    (pytest crashed, timed out, or the command is not pytest) `report_missing` is true and the
    run holds what the process gave. The tests run inside the OS sandbox `sandbox` describes
    (by default: when bubblewrap works here, without network), `root` writable; `None` runs
    them without one.
    """
    root = Path(root)
    work_dir = Path(cwd) if cwd is not None else root
    resolved = resolve_executable(list(argv), work_dir, root=root)
    shown_argv = list(resolved)
    head = pytest_head_length(resolved)
    report_dir = Path(tempfile.mkdtemp(prefix="toolgate-pytest-"))
    report_path = report_dir / "report.json"
    env: dict[str, str] = {}
    if head:
        resolved = [*resolved[:head], "-p", PLUGIN_MODULE, *resolved[head:]]
        env = {
            "PYTHONPATH": _python_path(),
            REPORT_ENV_VAR: str(report_path),
            WORKSPACE_ENV_VAR: str(root),
        }
    try:
        outcome = await run_process(
            resolved,
            work_dir,
            timeout_seconds=timeout_seconds,
            max_output_bytes=max_output_bytes,
            env=env,
            sandbox=sandbox,
            root=root,
            writable=[report_dir],
        )
        data = None if outcome.timed_out or not head else _read_report(report_path)
    finally:
        shutil.rmtree(report_dir, ignore_errors=True)

    if data is None:
        summary = TestSummary(duration_seconds=outcome.duration_seconds)
        failures = []
    else:
        summary = summary_from_report(data)
        # A run's failures share a few files: resolve each path once.
        realpath = functools.lru_cache(maxsize=4096)(os.path.realpath)
        failures = [
            failure_from_report(entry, root, realpath)
            for entry in data.get("failures") or []
            if isinstance(entry, dict)
        ]
    return TestRun(
        argv=shown_argv,
        exit_code=outcome.exit_code,
        summary=summary,
        failures=failures,
        output=outcome.output,
        output_truncated=outcome.output_truncated,
        output_size_bytes=outcome.output_size_bytes,
        timed_out=outcome.timed_out,
        report_missing=data is None,
        sandboxed=outcome.sandboxed,
        sandbox_note=outcome.sandbox_note,
        timeout_seconds=timeout_seconds,
        looked_in=_strings(data, "looked_in"),
        test_files=_strings(data, "python_files"),
    )


def _strings(report: dict[str, Any] | None, key: str) -> list[str]:
    value = (report or {}).get(key)
    return [str(item) for item in value] if isinstance(value, list) else []
