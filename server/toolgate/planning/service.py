"""Making and running plans, the one way every front end does it (terminal, language server)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.agent.events import NOTICE, EventBus
from toolgate.agent.gate import Gate
from toolgate.config import DEFAULT_MIN_CONFIDENCE, Config
from toolgate.model.modes import ModeMemory
from toolgate.model.structured import ask_structured, structured_formats
from toolgate.planning.gaps import ResolvedPlan, resolve_plan
from toolgate.planning.plan import Plan
from toolgate.planning.workflow import (
    PlanningPolicy,
    Workflow,
    WorkflowError,
    WorkflowOutcome,
    WorkflowRunner,
    match_trigger,
)
from toolgate.review.reviewer import Reviewer
from toolgate.schemas import PLAN, load_schema
from toolgate.tools.capabilities import build_registry
from toolgate.tools.registry import ToolRegistry
from toolgate.workspace import Workspace
from toolgate.workspace.files import atomic_write_text, toolgate_dir


@dataclass
class Engine:
    """What a plan's run needs: the tools, the gate, the events, the policy."""

    root: Path
    config: Config
    registry: ToolRegistry
    gate: Gate
    bus: EventBus
    policy: PlanningPolicy
    connections: list[Any]

    async def run(
        self,
        resolved: ResolvedPlan,
        task: str,
        inputs: dict[str, Any],
        run_id: str,
        *,
        llm_calls: int = 0,
    ) -> WorkflowOutcome:
        """Run a resolved plan step by step through the gate."""
        runner = WorkflowRunner(
            registry=self.registry,
            gate=self.gate,
            bus=self.bus,
            policy=self.policy,
            run_id=run_id,
            task=task,
            llm_calls=llm_calls,
        )
        return await runner.run(resolved, inputs)

    async def close(self) -> None:
        """Close what the tools hold open (MCP sessions)."""
        from toolgate.mcp.client import close_all

        await close_all(self.connections)


async def assemble_engine(
    root: Path,
    config: Config,
    reviewer: Reviewer,
    bus: EventBus,
    *,
    trusted: bool = True,
    buffers: Any = None,
) -> Engine:
    """The same tools, policy, reviewer and gate an agent run gets, without a model."""
    from toolgate.session import SetupError, build_registry, check_trust, gate_for

    try:
        for notice in check_trust(root, config):
            bus.emit(NOTICE, "", message=notice)
    except SetupError as exc:
        # Only the model would receive the key at that URL, and a workflow asks no model.
        bus.emit(NOTICE, "", message=str(exc))
    workspace = Workspace(root, max_file_bytes=config.limits.max_file_bytes)
    if buffers is not None:
        workspace.buffers = buffers
    registry, connections = await build_registry(config, root, None, None, trusted)
    gate, _ctx, redactor = gate_for(config, registry, workspace, reviewer, bus, trusted=trusted)
    bus.redactor.extend(redactor)
    planning = config.planning
    policy = PlanningPolicy(
        max_steps=config.limits.max_steps,
        max_tool_retries=config.limits.max_tool_retries,
        max_run_seconds=config.limits.max_run_seconds,
        max_llm_calls=config.limits.max_llm_calls,
        allow_capabilities=planning.get("allow_capabilities"),
        deny_capabilities=list(planning.get("deny_capabilities", [])),
    )
    return Engine(root, config, registry, gate, bus, policy, connections)


def load_kept(root: Path, plan_id: str) -> Plan:
    """A plan kept in `.toolgate/plans/` (as the person may have edited it)."""
    from toolgate.planning.plan import PlanError, parse_plan

    if not plan_id.replace("-", "").isalnum():
        raise PlanningError(f"{plan_id!r} is not a plan id")
    path = root / ".toolgate" / "plans" / f"{plan_id}.json"
    try:
        doc = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise PlanningError(f"cannot read the plan {plan_id}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        raise PlanningError(f"{path}: not a plan")
    steps = [
        {k: v for k, v in step.items() if k != "tool"} if isinstance(step, dict) else step
        for step in doc["steps"]
    ]
    try:
        return parse_plan({"goal": doc.get("goal", ""), "steps": steps})
    except PlanError as exc:
        raise PlanningError(f"{path}: {exc}") from None


PLAN_FORMATS = structured_formats("toolgate_plan", load_schema(PLAN))


class PlanningError(Exception):
    """No plan could be made; the message says why in one line."""


@dataclass
class PlanResult:
    """A resolved plan, where it came from, and what it cost."""

    plan_id: str
    resolved: ResolvedPlan
    path: Path
    llm_calls: int = 0
    workflow: Workflow | None = None  # set when a saved workflow's trigger matched
    inputs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form front ends send on (`toolgate/plan`)."""
        return {
            "planId": self.plan_id,
            "workflow": self.workflow.name if self.workflow else None,
            "llmCalls": self.llm_calls,
            **self.resolved.to_dict(),
        }


def resolve(root: Path, config: Config, plan: Plan, *, write_cache: bool = True) -> ResolvedPlan:
    """Resolve a plan against the workspace's registry with the configured minimum confidence."""
    min_confidence = float(config.planning.get("min_confidence", DEFAULT_MIN_CONFIDENCE))
    registry = build_registry(root, write_cache=write_cache)
    return resolve_plan(plan, registry, min_confidence=min_confidence)


def keep(root: Path, plan_id: str, resolved: ResolvedPlan) -> Path:
    """Keep a resolved plan in `.toolgate/plans/` for the person to read, edit or save."""
    path = toolgate_dir(root) / "plans" / f"{plan_id}.json"
    atomic_write_text(path, json.dumps(resolved.to_dict(), indent=2, ensure_ascii=False) + "\n")
    return path


async def make_plan(
    root: Path, config: Config, task: str, plan_id: str, notice: Callable[[str], None]
) -> PlanResult:
    """A saved workflow whose trigger matches the task, else the model's plan; resolved, kept.

    Raises PlanningError (and ManifestError for a broken manifest).
    """
    from toolgate.agent.redact import Redactor
    from toolgate.model.client import ModelError, OpenAIChatModel
    from toolgate.planning.plan import PlanError
    from toolgate.planning.planner import ask_for_plan
    from toolgate.session.assembly import (
        SetupError,
        check_trust,
        model_settings,
        pick_model,
        resolve_endpoint,
    )

    routed = match_trigger(root, task)
    if routed is not None:
        workflow, values = routed
        notice(f"the task matches the trigger of workflow {workflow.name}")
        try:
            inputs = workflow.bind(values)
        except WorkflowError as exc:
            raise PlanningError(str(exc)) from None
        resolved = resolve(root, config, workflow.plan)
        return PlanResult(plan_id, resolved, keep(root, plan_id, resolved), 0, workflow, inputs)
    try:
        for line in check_trust(root, config):
            notice(line)
        endpoint = await resolve_endpoint(config, notice)
    except SetupError as exc:
        raise PlanningError(str(exc)) from None
    settings = model_settings(config, endpoint)
    model = OpenAIChatModel(settings, redact=Redactor(config.api_key).text)
    registry = build_registry(root)
    max_calls = min(2, config.limits.max_llm_calls)
    calls = 0
    try:
        if not settings.model:
            model.model = settings.model = await pick_model(model)
        plan, calls = await ask_structured(
            settings,
            PLAN_FORMATS,
            lambda: ask_for_plan(model, task, registry, max_calls=max_calls),
            notice,
            ModeMemory(root),
        )
    except (PlanError, ModelError, SetupError) as exc:
        raise PlanningError(f"no plan: {exc}") from None
    finally:
        await model.close()
        if endpoint.close is not None:
            await endpoint.close()
    resolved = resolve(root, config, plan)
    return PlanResult(plan_id, resolved, keep(root, plan_id, resolved), calls)
