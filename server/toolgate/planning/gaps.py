"""Resolving a plan against the registry: each step gets a tool, or a gap entry saying why not.

Fail-closed: a step whose capability no tool provides, whose contract no tool keeps, whose name
is not a capability, or whose coverage confidence is under `planning.min_confidence` gets
`tool: null` and a gap. A plan with any gap is `partial`, and a partial plan does not run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolgate.config import DEFAULT_MIN_CONFIDENCE
from toolgate.planning.plan import Plan, Step, references
from toolgate.tools.capabilities import (
    INVALID,
    LOW_CONFIDENCE,
    CapabilityRegistry,
    Provider,
    contract_problems,
)

READY, PARTIAL = "ready", "partial"


def scaffoldable(reason: str) -> bool:
    """Whether a new tool can fill a gap of this reason: not when the step names no capability."""
    return reason != INVALID


@dataclass
class Gap:
    """What is missing for one step, in the shape the gap report publishes."""

    step_id: str
    missing_capability: str
    reason: str
    reason_message: str
    reason_details: dict[str, Any]
    proposed_tool_name: str
    proposed_input_schema: dict[str, Any]
    proposed_output_schema: dict[str, Any]
    priority: str  # high | medium | low

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, in the gap report's order."""
        return {
            "step_id": self.step_id,
            "missing_capability": self.missing_capability,
            "reason": self.reason,
            "reason_message": self.reason_message,
            "reason_details": self.reason_details,
            "proposed_tool_name": self.proposed_tool_name,
            "proposed_input_schema": self.proposed_input_schema,
            "proposed_output_schema": self.proposed_output_schema,
            "priority": self.priority,
        }

    def scaffold_command(self) -> str | None:
        """The `toolgate tools new` line that starts the missing tool, when one can fill it."""
        if not scaffoldable(self.reason):
            return None
        parts = [f"toolgate tools new {self.proposed_tool_name}"]
        parts.append(f"--capability {self.missing_capability}")
        parts += [f"--input {k}" for k in self.proposed_input_schema.get("properties", {})]
        parts += [f"--output {k}" for k in self.proposed_output_schema.get("properties", {})]
        return " ".join(parts)


@dataclass
class ResolvedStep:
    """A step and the tool chosen for it (None when it is a gap)."""

    step: Step
    provider: Provider | None

    @property
    def tool(self) -> str | None:
        """The chosen tool's name."""
        return self.provider.name if self.provider else None


@dataclass
class ResolvedPlan:
    """A plan with a tool or a gap for every step."""

    plan: Plan
    steps: list[ResolvedStep]
    gaps: list[Gap] = field(default_factory=list)

    @property
    def status(self) -> str:
        """`ready` when every step has a tool, else `partial` (which does not run)."""
        return PARTIAL if self.gaps else READY

    def to_dict(self) -> dict[str, Any]:
        """The plan, each step's tool, and the gap report."""
        return {
            "goal": self.plan.goal,
            "status": self.status,
            "steps": [{**r.step.to_dict(), "tool": r.tool} for r in self.steps],
            "gaps": [g.to_dict() for g in self.gaps],
        }


def _schema_of(value: Any) -> dict[str, Any]:
    if references(value) and isinstance(value, str) and value.strip().startswith("${"):
        return {}
    kind = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(type(value))
    if kind:
        return {"type": kind}
    if isinstance(value, list):
        return {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object"}
    return {}


def _priority(plan: Plan, step: Step) -> str:
    needed_later = any(
        ref.startswith(f"steps.{step.step_id}.")
        for later in plan.steps
        for ref in references(later.inputs)
    )
    if step.on_failure == "fail" or needed_later:
        return "high"
    return "medium" if step.on_failure == "retry" else "low"


def _gap(plan: Plan, step: Step, reason: str, message: str, details: dict[str, Any]) -> Gap:
    contract = plan.contract(step)
    return Gap(
        step_id=step.step_id,
        missing_capability=step.capability,
        reason=reason,
        reason_message=message,
        reason_details=details,
        proposed_tool_name=step.capability.replace(".", "_").replace("-", "_")[:64] or "tool",
        proposed_input_schema={
            "type": "object",
            "properties": {k: _schema_of(step.inputs.get(k)) for k in contract.inputs},
            "required": list(contract.inputs),
        },
        proposed_output_schema={
            "type": "object",
            "properties": {k: {} for k in contract.outputs},
            "required": list(contract.outputs),
        },
        priority=_priority(plan, step),
    )


def resolve_plan(
    plan: Plan,
    registry: CapabilityRegistry,
    *,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
) -> ResolvedPlan:
    """Give every step a tool or a gap entry."""
    resolved: list[ResolvedStep] = []
    gaps: list[Gap] = []
    for step in plan.steps:
        found = registry.resolve(step.capability, plan.contract(step))
        if found.provider is None:
            assert found.reason is not None
            gaps.append(_gap(plan, step, found.reason, found.message, found.details))
            resolved.append(ResolvedStep(step, None))
            continue
        if step.coverage_confidence < min_confidence:
            gaps.append(
                _gap(
                    plan,
                    step,
                    LOW_CONFIDENCE,
                    f"the plan is only {step.coverage_confidence:.2f} sure that "
                    f"{found.provider.name} covers this step (minimum {min_confidence:.2f})",
                    {
                        "coverage_confidence": step.coverage_confidence,
                        "min_confidence": min_confidence,
                        "coverage_rationale": step.coverage_rationale,
                        "candidate": found.provider.name,
                    },
                )
            )
            resolved.append(ResolvedStep(step, None))
            continue
        resolved.append(ResolvedStep(step, _named(step, plan, registry) or found.provider))
    return ResolvedPlan(plan, resolved, gaps)


def _named(step: Step, plan: Plan, registry: CapabilityRegistry) -> Provider | None:
    """The tool the step names, when it provides the step's capability and keeps its contract."""
    named = registry.get(step.tool) if step.tool else None
    if named is None or step.capability not in named.capabilities:
        return None
    return None if contract_problems(named, plan.contract(step)) else named
