"""Plans kept and resolved: what a plan names, against the workspace's tools.

Making a plan (which asks the model) and running one (through the gate) are flows of the
session service: `toolgate.session.plans`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.config import DEFAULT_MIN_CONFIDENCE, Config
from toolgate.model.structured import structured_formats
from toolgate.planning.gaps import ResolvedPlan, resolve_plan
from toolgate.planning.plan import Plan
from toolgate.planning.workflow import (
    Workflow,
)
from toolgate.schemas import PLAN, load_schema
from toolgate.tools.capabilities import build_registry
from toolgate.workspace.files import atomic_write_text, toolgate_dir


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
