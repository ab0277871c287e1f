"""Making a plan for a task, the one way every front end does it (terminal, language server)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.config import DEFAULT_MIN_CONFIDENCE, Config
from toolgate.planning.gaps import ResolvedPlan, resolve_plan
from toolgate.planning.plan import Plan
from toolgate.planning.workflow import Workflow, WorkflowError, match_trigger
from toolgate.tools.capabilities import build_registry
from toolgate.workspace.files import atomic_write_text, toolgate_dir


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
    from toolgate.model.client import ModelError, ModelSettings, OpenAIChatModel
    from toolgate.planning.plan import PlanError
    from toolgate.planning.planner import ask_for_plan
    from toolgate.session import SetupError, check_trust, pick_model, resolve_endpoint

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
    settings = ModelSettings(
        model=endpoint.model or "",
        base_url=endpoint.base_url,
        api_key=config.api_key,
        stream=config.stream,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout_seconds=config.request_timeout_seconds,
    )
    model = OpenAIChatModel(settings, redact=Redactor(config.api_key).text)
    try:
        if not settings.model:
            model.model = settings.model = await pick_model(model)
        plan, calls = await ask_for_plan(
            model, task, build_registry(root), max_calls=min(2, config.limits.max_llm_calls)
        )
    except (PlanError, ModelError, SetupError) as exc:
        raise PlanningError(f"no plan: {exc}") from None
    finally:
        await model.close()
        if endpoint.close is not None:
            await endpoint.close()
    resolved = resolve(root, config, plan)
    return PlanResult(plan_id, resolved, keep(root, plan_id, resolved), calls)
