"""Plans, the way every front end makes and runs them (the terminal, the language server).

Making one asks the model (or takes a saved workflow whose trigger matches the task) and keeps
the resolved plan in `.toolgate/plans/`; running one hands each step to the same gate an agent
run has: the same tools, policy, reviewer, trust and sandbox, without a model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgate.agent.events import NOTICE, EventBus
from toolgate.agent.gate import Gate
from toolgate.agent.redact import Redactor
from toolgate.config import Config
from toolgate.mcp.client import close_all
from toolgate.model.client import ModelError, OpenAIChatModel
from toolgate.model.modes import ModeMemory
from toolgate.model.structured import ask_structured
from toolgate.planning.gaps import ResolvedPlan
from toolgate.planning.plan import PlanError
from toolgate.planning.planner import ask_for_plan
from toolgate.planning.service import (
    PLAN_FORMATS,
    PlanningError,
    PlanResult,
    keep,
    resolve,
)
from toolgate.planning.workflow import (
    PlanningPolicy,
    WorkflowError,
    WorkflowOutcome,
    WorkflowRunner,
    match_trigger,
)
from toolgate.review.reviewer import Reviewer
from toolgate.session.assembly import (
    SetupError,
    build_registry,
    check_trust,
    context_budget,
    gate_for,
    model_settings,
    pick_model,
    resolve_endpoint,
)
from toolgate.session.mentions import Pointed, fit_blocks, gather
from toolgate.tools.capabilities import build_registry as capabilities
from toolgate.tools.registry import ToolRegistry
from toolgate.workspace import Workspace


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


async def make_plan(
    root: Path,
    config: Config,
    task: str,
    plan_id: str,
    notice: Callable[[str], None],
    pointed: Pointed | None = None,
) -> PlanResult:
    """A saved workflow whose trigger matches the task, else the model's plan; resolved, kept.

    The task's `@` mentions (and `pointed`, what the editor knows of them) are attached for the
    model as a run attaches them, within a third of the model's window; `notice` names them.

    Raises PlanningError (and ManifestError for a broken manifest).
    """
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
    registry = capabilities(root)
    workspace = Workspace(root, max_file_bytes=config.limits.max_file_bytes)
    blocks, refused = await gather(workspace, task, pointed)
    context = ""
    if blocks or refused:
        # Only a plan with something attached asks the endpoint for its window.
        budget = await context_budget(config, endpoint, settings)
        attached = fit_blocks(blocks, refused, budget.output_bytes())
        notice(attached.summary())
        context = attached.note
    max_calls = min(2, config.limits.max_llm_calls)
    calls = 0
    try:
        if not settings.model:
            model.model = settings.model = await pick_model(model)
        plan, calls = await ask_structured(
            settings,
            PLAN_FORMATS,
            lambda: ask_for_plan(model, task, registry, max_calls=max_calls, context=context),
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
