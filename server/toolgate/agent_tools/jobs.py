"""The agent tools' shared machinery: validation, time limits, retries, and one run per job.

Every agent tool is a Toolgate run through the session service: a new session, its own run
log and checkpoint, the gate between the model and the disk, and a `HostReviewer` that asks
the calling host's person (or applies the server's `--approve`). A call never raises: bad
arguments, a refused change, a run that failed or ran out of time all come back as a
`ToolResult` (`success`, `data`, `error`, `suggestions`, `duration_seconds`).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from toolgate.agent.events import Event, EventBus
from toolgate.agent_tools.approvals import Ask, Constraint, HostReviewer
from toolgate.agent_tools.changes import FileChange, combined_diff, run_changes
from toolgate.agent_tools.progress import describe
from toolgate.agent_tools.specs import SPECS, AgentToolSpec
from toolgate.config import AgentToolSettings, Config, ConfigError
from toolgate.conversation.store import SessionError
from toolgate.records import ToolResult
from toolgate.session import SessionService, SetupError
from toolgate.workspace import PathRefused, Workspace

log = logging.getLogger(__name__)

Progress = Callable[[str], None]


class JobError(ValueError):
    """A job that cannot be done as asked (bad arguments, a path outside the workspace)."""


@dataclass
class CallContext:
    """What the front end lends one call: a way to ask its person, and to report progress."""

    ask: Ask | None = None
    progress: Progress = field(default=lambda message: None)


@dataclass
class RunReport:
    """How one agent run of a job went, and what it changed."""

    run_id: str
    status: str
    reason: str | None
    answer: str | None
    log_path: str | None
    changes: list[FileChange]
    suggestions: list[str]

    @property
    def diff(self) -> str:
        """Every change of the run as one unified diff."""
        return combined_diff(self.changes)

    def data(self) -> dict[str, Any]:
        """The fields every job that makes a run returns."""
        return {
            "run_id": self.run_id,
            "status": self.status,
            "reason": self.reason,
            "summary": self.answer,
            "diff": self.diff,
            "files_changed": [change.to_dict() for change in self.changes],
            "run_log": self.log_path,
            "undo": f"toolgate undo {self.run_id}" if self.changes else None,
        }


class Job:
    """One call of an agent tool: its settings, its time limit, its runs."""

    def __init__(
        self, jobs: AgentJobs, name: str, config: Config, settings: AgentToolSettings
    ) -> None:
        self.jobs = jobs
        self.name = name
        self.config = config
        self.settings = settings
        self.call = CallContext()
        self.deadline = time.monotonic() + settings.timeout_seconds  # set again per attempt
        # Why the last attempt may be worth repeating (a failed run, a timeout); None: it is not.
        self.retry_reason: str | None = None

    @property
    def root(self) -> Path:
        """The workspace root."""
        return self.jobs.root

    def workspace(self) -> Workspace:
        """The sandboxed workspace (every path checked)."""
        return Workspace(self.root, max_file_bytes=self.config.limits.max_file_bytes)

    def remaining(self) -> float:
        """Seconds left before the job's time limit (at least one)."""
        return max(1.0, self.deadline - time.monotonic())

    def check_paths(self, paths: list[str]) -> None:
        """Refuse paths outside the workspace, or missing, before anything runs."""
        workspace = self.workspace()
        for path in paths:
            try:
                real = workspace.resolve(path)
            except PathRefused as exc:
                raise JobError(f"{path}: {exc}") from None
            if not real.exists():
                raise JobError(f"{path} does not exist in the workspace")

    def reviewer(self, constraint: Constraint | None = None) -> HostReviewer:
        """The run's reviewer: the host's person when it can be asked, else the server's rule."""
        return HostReviewer(
            self.workspace(),
            ask=self.call.ask,
            approve=self.jobs.approve,
            constraint=constraint,
        )

    def bus(self) -> EventBus:
        """An event bus whose events go out as progress lines."""
        bus = EventBus()

        def forward(event: Event) -> None:
            line = describe(event)
            if line is not None:
                self.call.progress(line)

        bus.subscribe(forward)
        return bus

    async def run_agent(
        self, task: str, reviewer: HostReviewer, config: Config | None = None
    ) -> RunReport:
        """One agent run in a new session, ended by the model, a limit, or the time limit."""
        config = config or self.config
        service = self.jobs.service
        claim = service.claim(new=True)
        timed_out = False

        def time_up() -> None:
            nonlocal timed_out
            timed_out = True
            claim.cancel(
                f"{self.name} ran out of time ({self.settings.timeout_seconds:g}s, "
                f"agent_tools.{self.name}.timeout_seconds)"
            )

        # The time limit holds from here: a model or MCP server that never starts ends it too.
        timer = asyncio.get_running_loop().call_later(self.remaining(), time_up)
        try:
            outcome = await service.turn(
                claim, task, config=config, reviewer=reviewer, bus=self.bus()
            )
        finally:
            timer.cancel()
        failed = timed_out or outcome.status == "failed"
        self.retry_reason = outcome.reason if failed else None
        return RunReport(
            run_id=outcome.run_id,
            status=outcome.status,
            reason=outcome.reason,
            answer=outcome.answer,
            log_path=outcome.log_path,
            changes=run_changes(self.root, outcome.run_id),
            suggestions=reviewer.suggestions(),
        )


Handler = Callable[[Job, dict[str, Any]], Awaitable[ToolResult]]


def run_result(report: RunReport, extra: dict[str, Any] | None = None) -> ToolResult:
    """A job's result from its run: success when the run completed."""
    data = {**report.data(), **(extra or {})}
    if report.status == "completed":
        return ToolResult(True, data, None, report.suggestions)
    error = f"the run ended {report.status}" + (f": {report.reason}" if report.reason else "")
    return ToolResult(False, data, error, report.suggestions)


class AgentJobs:
    """The agent tools of one workspace, for a front end to list and call."""

    def __init__(self, root: Path, service: SessionService, approve: str = "deny") -> None:
        self.root = root
        self.service = service
        self.approve = approve
        self._handlers: dict[str, Handler] = {}

    def register(self, name: str, handler: Handler) -> None:
        """The function that does the job of tool `name`."""
        self._handlers[name] = handler

    def specs(self) -> list[AgentToolSpec]:
        """The tools offered: those registered and not switched off in the configuration."""
        try:
            settings = self.service.config().agent_tools
        except ConfigError:
            # Listed, so that a call reaches `call` and says what is wrong with the file.
            return [spec for spec in SPECS if spec.name in self._handlers]
        return [
            spec for spec in SPECS if spec.name in self._handlers and settings[spec.name].enabled
        ]

    def offers(self, name: str) -> bool:
        """Whether `name` is one of the agent tools offered now."""
        return any(spec.name == name for spec in self.specs())

    async def call(
        self, name: str, arguments: dict[str, Any] | None, context: CallContext
    ) -> ToolResult:
        """Do one job; every failure is a result saying why, never an exception."""
        started = time.monotonic()
        result = await self._call(name, dict(arguments or {}), context)
        result.duration_seconds = round(time.monotonic() - started, 3)
        return result

    async def _call(self, name: str, arguments: dict[str, Any], context: CallContext) -> ToolResult:
        try:
            config = copy.deepcopy(self.service.config())
        except ConfigError as exc:
            return ToolResult.fail(f"configuration error: {exc}")
        spec = next((s for s in SPECS if s.name == name), None)
        handler = self._handlers.get(name)
        if spec is None or handler is None:
            return ToolResult.fail(f"unknown agent tool {name!r}")
        settings = config.agent_tools[name]
        if not settings.enabled:
            return ToolResult.fail(f"{name} is switched off (agent_tools.{name}.enabled = false)")
        problem = _invalid(spec, arguments)
        if problem is not None:
            return ToolResult.fail(f"invalid arguments for {name}: {problem}")
        job = Job(self, name, config, settings)
        job.call = context
        attempts = 1 + settings.retry_count
        result = ToolResult.fail(f"{name} did not run")
        for attempt in range(1, attempts + 1):
            # Each attempt has the whole time limit: a retry after a timeout must be able to end.
            job.deadline = time.monotonic() + settings.timeout_seconds
            job.retry_reason = None
            try:
                result = await handler(job, arguments)
            except JobError as exc:
                return ToolResult.fail(str(exc))
            except (ConfigError, SetupError, SessionError) as exc:
                return ToolResult.fail(f"{name} could not start a run: {exc}")
            except Exception as exc:  # a crash fails this call, never the server
                log.exception("agent tool %s crashed", name)
                result = ToolResult.fail(f"{name} failed: {type(exc).__name__}: {exc}")
                job.retry_reason = result.error
            if job.retry_reason is None or attempt == attempts:
                break
            context.progress(f"attempt {attempt} of {attempts} failed; trying again")
        if attempts > 1 and isinstance(result.data, dict):
            result.data["attempts"] = attempt
        return result


def _invalid(spec: AgentToolSpec, arguments: dict[str, Any]) -> str | None:
    errors = sorted(
        Draft202012Validator(spec.input_schema).iter_errors(arguments),
        key=lambda e: list(e.absolute_path),
    )
    if not errors:
        return None
    where = ".".join(str(p) for p in errors[0].absolute_path)
    return f"{where + ': ' if where else ''}{errors[0].message}"
