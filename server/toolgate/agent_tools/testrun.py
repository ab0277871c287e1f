"""run_tests: the workspace's tests through Toolgate's gate and runner, counted, with coverage.

Each command is the built-in `run_tests` call through the engine's gate (allow-list, the OS
sandbox, pytest's own report), recorded as one run log. Coverage comes from pytest-cov, asked
for a JSON report at the workspace's root (pytest's path options must stay inside the
workspace, and the sandbox keeps `.toolgate/` read-only) that is read and removed again; the
`.coverage` data file is put back as it was before the run.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.agent_tools.jobs import Job, JobError
from toolgate.records import ToolCall, ToolResult, new_id
from toolgate.runner.allowlist import CommandRefused, split_command
from toolgate.session import gated_calls
from toolgate.tools.builtins import is_pytest
from toolgate.workspace import PathRefused
from toolgate.workspace.files import atomic_write_bytes

DEFAULT_COMMAND = "pytest -q --tb=short"
COUNTS = ("total", "passed", "failed", "skipped", "errors")


@dataclass
class SuiteReport:
    """What the test commands of one job found."""

    run_id: str
    log_path: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    duration_seconds: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    coverage: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)  # a command refused, or that did not run
    suggestions: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every command ran, and no test failed or errored."""
        return (
            not self.errors
            and self.counts["total"] > 0
            and self.counts["failed"] == 0
            and self.counts["errors"] == 0
        )

    def data(self) -> dict[str, Any]:
        """The result's data: the counts at the top, then the details."""
        return {
            **self.counts,
            "duration_seconds": round(self.duration_seconds, 3),
            "failures": self.failures,
            "commands": self.commands,
            **({"coverage": self.coverage} if self.coverage is not None else {}),
            "run_id": self.run_id,
            "run_log": self.log_path,
        }

    def error(self) -> str | None:
        """Why the suite did not pass, in one line (None when it did)."""
        if self.errors:
            return "; ".join(self.errors)
        if self.counts["total"] == 0:
            return "no tests were collected"
        if not self.passed:
            bad = self.counts["failed"] + self.counts["errors"]
            return f"{bad} of {self.counts['total']} tests failed"
        return None


def _scope_args(job: Job, scope: str) -> list[str]:
    """The test path (or node id) to hand pytest, checked to stay inside the workspace."""
    if not scope.strip():
        return []
    path = scope.split("::", 1)[0]
    try:
        real = job.workspace().resolve(path)
    except PathRefused as exc:
        raise JobError(f"test_scope {scope!r}: {exc}") from None
    if not real.exists():
        raise JobError(f"test_scope {scope!r}: {path} does not exist in the workspace")
    return [scope]


def _argv(command: str) -> list[str]:
    try:
        argv = split_command(command)
    except CommandRefused as exc:
        raise JobError(f"test command {command!r}: {exc}") from None
    if not is_pytest(argv):
        raise JobError(
            f"test command {command!r} does not run pytest (pytest …, python -m pytest …), "
            "so its results could not be counted"
        )
    return argv


def _coverage(report: Path, root: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(report.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    totals = data.get("totals") or {}
    files = {
        str(path): round(float((info.get("summary") or {}).get("percent_covered", 0.0)), 2)
        for path, info in (data.get("files") or {}).items()
    }
    return {
        "percent": round(float(totals.get("percent_covered", 0.0)), 2),
        "covered_lines": int(totals.get("covered_lines", 0)),
        "statements": int(totals.get("num_statements", 0)),
        "missing_lines": int(totals.get("missing_lines", 0)),
        "files": files,
    }


async def run_suite(
    job: Job, commands: list[str], scope: str = "", coverage: bool = False
) -> SuiteReport:
    """Run the test commands through the gate, one run log for all of them."""
    argvs = [_argv(command) for command in commands or [DEFAULT_COMMAND]]
    scoped = _scope_args(job, scope)
    config = job.config
    config.limits.command_timeout_seconds = min(
        config.limits.command_timeout_seconds, job.remaining()
    )
    run_id = new_id("tests")
    reviewer = job.reviewer()
    calls = gated_calls(
        job.root, config, reviewer, job.bus(), run_id, f"{job.name}: " + " | ".join(commands)
    )
    report = SuiteReport(run_id, str(calls.runlog.path))
    data_file = job.root / ".coverage"
    data_before = data_file.read_bytes() if data_file.is_file() else None
    cov_report = job.root / f".toolgate-coverage-{run_id}.json"
    for number, argv in enumerate(argvs, 1):
        argv = [*argv, *scoped]
        if coverage:
            argv += ["--cov=.", f"--cov-report=json:{cov_report.relative_to(job.root)}"]
        command = shlex.join(argv)
        job.call.progress(f"running {command}")
        call = ToolCall(id=f"{run_id}-{number}", name="run_tests", arguments={"command": command})
        outcome = await calls.gate.handle(call)
        step = calls.runlog.begin_step(number)
        calls.runlog.record_call(
            step,
            {
                "id": call.id,
                "name": call.name,
                "arguments": outcome.arguments,
                "decision": outcome.decision,
                "result": outcome.result.to_dict(),
            },
        )
        calls.runlog.save()
        _add(report, command, outcome.result)
    if coverage:
        report.coverage = _coverage(cov_report, job.root)
        with contextlib.suppress(OSError):
            cov_report.unlink()
        with contextlib.suppress(OSError):
            if data_before is None:
                data_file.unlink()
            else:
                atomic_write_bytes(data_file, data_before)
        if report.coverage is None:
            report.errors.append(
                "no coverage report: measuring coverage needs pytest-cov installed where the "
                "tests run (pip install pytest-cov)"
            )
    report.suggestions += reviewer.suggestions()
    calls.runlog.finish("completed" if report.passed else "failed", report.error(), {})
    return report


def _add(report: SuiteReport, command: str, result: ToolResult) -> None:
    data = result.data if isinstance(result.data, dict) else {}
    summary = data.get("summary") or {}
    for key in COUNTS:
        report.counts[key] += int(summary.get(key, 0))
    report.duration_seconds += float(summary.get("duration_seconds", 0.0))
    report.failures += list(data.get("failures") or [])
    report.commands.append(
        {"command": command, "exit_code": data.get("exit_code"), "error": result.error}
    )
    if result.error:
        report.errors.append(f"{command}: {result.error}")


async def run_tests(job: Job, arguments: dict[str, Any]) -> ToolResult:
    """The tests' counts, failures and (when asked) coverage; success when they all pass."""
    report = await run_suite(
        job,
        list(arguments.get("test_commands") or []),
        str(arguments.get("test_scope") or ""),
        bool(arguments.get("coverage_required")),
    )
    suggestions = list(report.suggestions)
    suggestions += [
        f"{failure.get('test_id')} failed at {failure.get('file')}:{failure.get('line')}: "
        f"{str(failure.get('message', '')).splitlines()[0] if failure.get('message') else ''}"
        for failure in report.failures[:10]
    ]
    return ToolResult(report.passed, report.data(), report.error(), suggestions)
