"""Workflows: a plan saved as `.agent/workflows/NAME.yaml`, and running a plan step by step.

Each step is a tool call that passes the run's gate like any call the model makes (policy,
review, trust, allow-list, sandbox), plus the planning policy: capabilities allowed or denied,
and the run's limits (`max_steps`, `max_tool_retries`, `max_run_seconds`, `max_llm_calls`). A
violation ends the run `blocked_by_policy`. A step's failure is handled by its `on_failure`:
`retry` (up to `max_tool_retries` more times), `skip` (later references to it fail), `fail`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toolgate.agent.events import RUN_FINISHED, RUN_STARTED, EventBus
from toolgate.agent.gate import Gate
from toolgate.agent.runlog import RunLog
from toolgate.planning.gaps import ResolvedPlan
from toolgate.planning.plan import Plan, PlanError, Step, Unresolved, fill, parse_plan
from toolgate.records import ToolCall, ToolResult
from toolgate.runner.allowlist import CommandRefused
from toolgate.schemas import WORKFLOW, first_error
from toolgate.tools.activity import CommandActivity
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.yaml_manifest import EntrypointActivity
from toolgate.workspace.files import atomic_write_text

WORKFLOWS = Path(".agent") / "workflows"
STEP_STARTED = "WorkflowStepStarted"
STEP_FINISHED = "WorkflowStepFinished"
COMPLETED, FAILED, BLOCKED, PARTIAL = "completed", "failed", "blocked_by_policy", "partial"
CANCELLED = "cancelled"


class WorkflowError(ValueError):
    """A workflow file or its inputs cannot be used; the message names the file and field."""


@dataclass
class Workflow:
    """A saved plan with declared inputs."""

    name: str
    plan: Plan
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    description: str = ""
    trigger: str | None = None
    path: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        """The file's form."""
        doc: dict[str, Any] = {"name": self.name}
        if self.description:
            doc["description"] = self.description
        doc["goal"] = self.plan.goal
        if self.trigger:
            doc["trigger"] = self.trigger
        if self.inputs:
            doc["inputs"] = self.inputs
        doc["steps"] = [s.to_dict() for s in self.plan.steps]
        return doc

    def bind(self, values: dict[str, str]) -> dict[str, Any]:
        """The inputs of one run from `key=value` strings: typed, defaulted, required checked."""
        unknown = sorted(set(values) - set(self.inputs))
        if unknown:
            declared = ", ".join(self.inputs) or "none"
            raise WorkflowError(
                f"workflow {self.name}: unknown input {unknown[0]!r} (declared: {declared})"
            )
        bound: dict[str, Any] = {}
        for name, spec in self.inputs.items():
            if name in values:
                bound[name] = _coerce(self.name, name, values[name], spec.get("type", "string"))
            elif "default" in spec:
                bound[name] = spec["default"]
            elif spec.get("required", True):
                raise WorkflowError(f"workflow {self.name}: the input {name!r} is required")
        return bound


def _coerce(workflow: str, name: str, raw: str, kind: str) -> Any:
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
        if kind == "boolean":
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(raw)
            return raw.lower() in ("true", "1", "yes")
    except ValueError:
        raise WorkflowError(
            f"workflow {workflow}: input {name!r} must be {kind}, got {raw!r}"
        ) from None
    return raw


def workflow_paths(root: Path) -> list[Path]:
    """Every saved workflow of the workspace."""
    folder = root / WORKFLOWS
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def load_workflow(path: Path) -> Workflow:
    """Read and check one workflow file."""
    try:
        doc = yaml.safe_load(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise WorkflowError(f"{path}: cannot be read as YAML: {exc}") from None
    problem = first_error(WORKFLOW, doc)
    if problem is not None:
        raise WorkflowError(f"{path}: {problem[0]}: {problem[1]}")
    inputs = dict(doc.get("inputs", {}))
    try:
        plan = parse_plan(
            {"goal": doc.get("goal", doc.get("description", doc["name"])), "steps": doc["steps"]},
            declared_inputs=set(inputs),
        )
    except PlanError as exc:
        raise WorkflowError(f"{path}: {str(exc).removeprefix('plan: ')}") from None
    trigger = doc.get("trigger")
    if trigger is not None:
        try:
            re.compile(trigger)
        except re.error as exc:
            raise WorkflowError(f"{path}: trigger: not a regular expression ({exc})") from None
    return Workflow(doc["name"], plan, inputs, doc.get("description", ""), trigger, path)


def find_workflow(root: Path, name: str) -> Workflow:
    """The workflow saved under that name."""
    path = root / WORKFLOWS / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(p.stem for p in workflow_paths(root)) or "none"
        raise WorkflowError(f"no workflow {name!r} in {root / WORKFLOWS} (saved: {known})")
    return load_workflow(path)


def save_workflow(root: Path, workflow: Workflow) -> Path:
    """Write `.agent/workflows/NAME.yaml` atomically."""
    path = root / WORKFLOWS / f"{workflow.name}.yaml"
    atomic_write_text(path, yaml.safe_dump(workflow.to_dict(), sort_keys=False))
    return path


def match_trigger(root: Path, task: str) -> tuple[Workflow, dict[str, str]] | None:
    """A saved workflow whose trigger matches the task, with the inputs its groups name."""
    for path in workflow_paths(root):
        try:
            workflow = load_workflow(path)
        except WorkflowError:
            continue
        if workflow.trigger:
            match = re.search(workflow.trigger, task)
            if match:
                return workflow, {k: v for k, v in match.groupdict().items() if v is not None}
    return None


@dataclass
class PlanningPolicy:
    """The limits and capability lists a plan's run obeys."""

    max_steps: int = 30
    max_tool_retries: int = 3
    max_run_seconds: float = 900.0
    max_llm_calls: int = 40
    allow_capabilities: list[str] | None = None
    deny_capabilities: list[str] = field(default_factory=list)

    def refuses(self, capability: str) -> str | None:
        """Why the policy refuses a capability, or None."""
        if capability in self.deny_capabilities:
            return f"the capability {capability} is denied by policy"
        if self.allow_capabilities is not None and capability not in self.allow_capabilities:
            return f"the capability {capability} is not among the allowed capabilities"
        return None


@dataclass
class StepRecord:
    """How one step went."""

    step_id: str
    capability: str
    tool: str | None
    status: str  # done | skipped | failed | denied | not_run
    attempts: int = 0
    error: str | None = None
    output: Any = None


@dataclass
class WorkflowOutcome:
    """How a run of a plan ended, with its account of operations done and missing."""

    run_id: str
    status: str
    reason: str | None
    steps: list[StepRecord]
    missing: list[str]
    log_path: str | None = None

    @property
    def done(self) -> list[str]:
        """`step_id capability` of every step that ran to success."""
        return [f"{s.step_id} {s.capability}" for s in self.steps if s.status == "done"]

    def account(self) -> dict[str, Any]:
        """The final account: operations done and, when it did not finish, missing."""
        return {
            "status": self.status,
            "reason": self.reason,
            "done": self.done,
            "missing": self.missing if self.status != COMPLETED else [],
            "skipped": [f"{s.step_id} {s.capability}" for s in self.steps if s.status == "skipped"],
        }


@dataclass
class DryStep:
    """What a step would run, worked out without running anything."""

    step_id: str
    capability: str
    tool: str | None
    argv: list[str] | None
    arguments: dict[str, Any]
    note: str = ""


def dry_run(
    resolved: ResolvedPlan,
    registry: ToolRegistry,
    gate: Gate,
    request: str,
    inputs: dict[str, Any],
) -> list[DryStep]:
    """Each step's resolved tool and argv; nothing runs and nothing is written."""
    out: list[DryStep] = []
    for item in resolved.steps:
        step = item.step
        args: dict[str, Any] = {}
        note = ""
        for key, value in step.inputs.items():
            try:
                args[key] = fill(value, request, inputs, {})
            except Unresolved:
                # Earlier outputs do not exist in a dry run: the reference is shown as written.
                args[key] = value
                note = "inputs from earlier steps are filled when it runs"
        argv: list[str] | None = None
        activity = registry.activity(item.tool) if item.tool else None
        if isinstance(activity, EntrypointActivity):
            argv = activity.command_line()
            note = note or f"stdin: {json.dumps(args, ensure_ascii=False)}"
        elif isinstance(activity, CommandActivity):
            try:
                argv = activity.argv(gate.ctx, args)
            except (CommandRefused, KeyError) as exc:
                note = note or f"argv not known yet: {exc}"
        out.append(DryStep(step.step_id, step.capability, item.tool, argv, args, note))
    return out


class WorkflowRunner:
    """Runs a resolved plan through a gate."""

    def __init__(
        self,
        *,
        registry: ToolRegistry,
        gate: Gate,
        bus: EventBus,
        policy: PlanningPolicy,
        run_id: str,
        task: str,
        llm_calls: int = 0,
    ) -> None:
        self.registry = registry
        self.gate = gate
        self.bus = bus
        self.policy = policy
        self.run_id = run_id
        self.task = task
        self.llm_calls = llm_calls
        gate.ctx.run_id = run_id
        self.runlog = RunLog(
            gate.ctx.workspace.root, run_id, task, "", "", "workflow", gate.redact, "workflow"
        )
        bus.subscribe(self.runlog.on_event)

    async def run(self, resolved: ResolvedPlan, inputs: dict[str, Any]) -> WorkflowOutcome:
        """Run every step in order; a partial plan runs nothing."""
        started = time.monotonic()
        self.bus.emit(RUN_STARTED, self.run_id, task=self.task, workflow=True)
        self.runlog.set(plan=resolved.to_dict(), inputs=inputs)
        records = [
            StepRecord(r.step.step_id, r.step.capability, r.tool, "not_run") for r in resolved.steps
        ]
        status, reason = COMPLETED, None
        cancelled = False
        if resolved.gaps:
            status = PARTIAL
            reason = f"the plan has {len(resolved.gaps)} gap(s) and was not run"
        elif self.llm_calls > self.policy.max_llm_calls:
            status = BLOCKED
            reason = f"planning took {self.llm_calls} model calls, over max_llm_calls"
        else:
            try:
                status, reason = await self._steps(resolved, inputs, records, started)
            except asyncio.CancelledError:
                # Cancelled from a front end: the run still ends with its account and log.
                status, reason = CANCELLED, "cancelled by the person"
                cancelled = True
        # A partial plan misses what its gap report names; a run that stopped, what it did not do.
        missing = [f"{g.step_id} {g.missing_capability}" for g in resolved.gaps]
        if status not in (COMPLETED, PARTIAL):
            missing += [
                f"{r.step_id} {r.capability}"
                for r in records
                if r.status in ("not_run", "failed", "denied")
                and f"{r.step_id} {r.capability}" not in missing
            ]
        outcome = WorkflowOutcome(
            self.run_id, status, reason, records, missing, str(self.runlog.path)
        )
        account = outcome.account()
        self.runlog.set(account=account, answer=None)
        self.bus.emit(
            RUN_FINISHED,
            self.run_id,
            status=status,
            reason=reason,
            answer=None,
            done=account["done"],
            missing=account["missing"],
        )
        self.runlog.finish(status, reason, {"steps": len(records)})
        if cancelled:
            raise asyncio.CancelledError
        return outcome

    async def _steps(
        self,
        resolved: ResolvedPlan,
        inputs: dict[str, Any],
        records: list[StepRecord],
        started: float,
    ) -> tuple[str, str | None]:
        outputs: dict[str, Any] = {}
        for index, (item, record) in enumerate(zip(resolved.steps, records, strict=True)):
            step = item.step
            if index >= self.policy.max_steps:
                return BLOCKED, f"the plan has more than max_steps = {self.policy.max_steps} steps"
            refused = self.policy.refuses(step.capability)
            if refused:
                record.status, record.error = "denied", refused
                return BLOCKED, f"step {step.step_id}: {refused}"
            assert item.tool is not None
            log_step = self.runlog.begin_step(index + 1)
            self.bus.emit(
                STEP_STARTED,
                self.run_id,
                step_id=step.step_id,
                capability=step.capability,
                tool_name=item.tool,
            )
            tries = 1 + (self.policy.max_tool_retries if step.on_failure == "retry" else 0)
            result: ToolResult | None = None
            decision = ""
            while record.attempts < tries:
                if time.monotonic() - started > self.policy.max_run_seconds:
                    return BLOCKED, (
                        f"the run took longer than max_run_seconds = "
                        f"{self.policy.max_run_seconds:g}"
                    )
                record.attempts += 1
                result, decision = await self._call(
                    item.tool, step, record, inputs, outputs, log_step
                )
                if result.success or decision == "denied-by-policy":
                    break
            assert result is not None
            self.bus.emit(
                STEP_FINISHED,
                self.run_id,
                step_id=step.step_id,
                capability=step.capability,
                tool_name=item.tool,
                success=result.success,
                attempts=record.attempts,
                error=result.error,
            )
            if result.success:
                record.status, record.output = "done", result.data
                outputs[step.step_id] = result.data
                continue
            record.error = result.error
            if decision == "denied-by-policy":
                record.status = "denied"
                return BLOCKED, f"step {step.step_id}: {result.error}"
            if step.on_failure == "skip":
                record.status = "skipped"
                continue
            record.status = "failed"
            return FAILED, f"step {step.step_id} ({step.capability}) failed: {result.error}"
        return COMPLETED, None

    async def _call(
        self,
        tool: str,
        step: Step,
        record: StepRecord,
        inputs: dict[str, Any],
        outputs: dict[str, Any],
        log_step: dict[str, Any],
    ) -> tuple[ToolResult, str]:
        step_id = step.step_id
        call = ToolCall(
            id=f"{step_id}-{record.attempts}",
            name=tool,
            arguments={},
            syntax="workflow",
            reasoning=f"workflow step {step_id}: {step.capability}",
        )
        try:
            call.arguments = fill(step.inputs, self.task, inputs, outputs)
        except Unresolved as exc:
            result = self.gate.invalid(call, f"step {step_id}: {exc}").result
            return result, "invalid"
        problem = self.registry.validate(tool, call.arguments)
        if problem:
            return self.gate.invalid(call, problem).result, "invalid"
        outcome = await self.gate.handle(call)
        self.runlog.record_call(
            log_step,
            {
                "call_id": call.id,
                "step_id": step_id,
                "capability": step.capability,
                "tool": tool,
                "arguments": outcome.arguments,
                "decision": outcome.decision,
                "result": outcome.result.to_dict(),
            },
        )
        self.runlog.save()
        refused = outcome.result.data
        denied_by_policy = (
            outcome.decision == "denied" and "denied by policy" in (outcome.result.error or "")
        ) or (isinstance(refused, dict) and refused.get("refused") == "untrusted_manifest")
        return outcome.result, "denied-by-policy" if denied_by_policy else outcome.decision
