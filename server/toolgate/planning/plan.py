"""Plans: steps named by capability, with inputs from the request or from earlier steps' outputs.

A step's input is a literal JSON value or a reference: `"${request}"`, `"${inputs.NAME}"` or
`"${steps.ID.output.FIELD}"` (deeper fields with more dots). A string that holds a reference
among other text gets the value's text in its place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from toolgate.schemas import PLAN, first_error
from toolgate.tools.capabilities import Contract

REFERENCE = re.compile(r"\$\{([^}]+)\}")
_STEP_REF = re.compile(r"^steps\.([A-Za-z][A-Za-z0-9_\-]*)\.output(?:\.(.+))?$")


class PlanError(ValueError):
    """A plan that cannot be used; the message names the field."""


@dataclass(frozen=True)
class Step:
    """One capability step of a plan."""

    step_id: str
    capability: str
    inputs: dict[str, Any]
    on_failure: str = "fail"
    required_inputs: tuple[str, ...] = ()
    required_outputs: tuple[str, ...] = ()
    coverage_confidence: float = 1.0
    coverage_rationale: str = ""
    tool: str | None = None  # the tool the plan names for the step, if any

    def to_dict(self) -> dict[str, Any]:
        """The plan-schema form."""
        doc: dict[str, Any] = {"step_id": self.step_id, "capability": self.capability}
        if self.tool:
            doc["tool"] = self.tool
        doc["inputs"] = self.inputs
        doc["on_failure"] = self.on_failure
        if self.required_inputs or self.required_outputs:
            doc["capability_contract"] = {
                "required_inputs": list(self.required_inputs),
                "required_outputs": list(self.required_outputs),
            }
        doc["coverage_confidence"] = self.coverage_confidence
        if self.coverage_rationale:
            doc["coverage_rationale"] = self.coverage_rationale
        return doc


@dataclass
class Plan:
    """A goal and its steps, in order."""

    goal: str
    steps: list[Step] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The plan-schema form."""
        return {"goal": self.goal, "steps": [s.to_dict() for s in self.steps]}

    def contract(self, step: Step) -> Contract:
        """What a step gives its tool and needs from it, later steps' references included."""
        outputs = list(step.required_outputs)
        for later in self.steps:
            for ref in references(later.inputs):
                match = _STEP_REF.match(ref)
                if match and match.group(1) == step.step_id and match.group(2):
                    name = match.group(2).split(".", 1)[0]
                    if name not in outputs:
                        outputs.append(name)
        inputs = list(dict.fromkeys([*step.inputs, *step.required_inputs]))
        return Contract(tuple(inputs), tuple(outputs))


def references(value: Any) -> list[str]:
    """Every `${…}` reference inside a value."""
    if isinstance(value, str):
        return [m.group(1).strip() for m in REFERENCE.finditer(value)]
    if isinstance(value, dict):
        return [r for v in value.values() for r in references(v)]
    if isinstance(value, list):
        return [r for v in value for r in references(v)]
    return []


def parse_plan(doc: Any, *, declared_inputs: set[str] | None = None, request: str = "") -> Plan:
    """Check a plan document against the published schema and its references.

    A plan without a `goal` takes the request it was made for as its goal.
    """
    problem = first_error(PLAN, doc)
    if problem is not None:
        raise PlanError(f"plan: {problem[0]}: {problem[1]}")
    steps: list[Step] = []
    seen: set[str] = set()
    for index, raw in enumerate(doc["steps"]):
        step_id = raw["step_id"]
        where = f"plan: steps.{index}"
        if step_id in seen:
            raise PlanError(f"{where}.step_id: {step_id!r} is used by an earlier step")
        for ref in references(raw["inputs"]):
            if ref == "request":
                continue
            if ref.startswith("inputs."):
                name = ref[len("inputs.") :]
                if declared_inputs is not None and name not in declared_inputs:
                    raise PlanError(f"{where}.inputs: ${{{ref}}} is not a declared input")
                continue
            match = _STEP_REF.match(ref)
            if match is None:
                raise PlanError(
                    f"{where}.inputs: ${{{ref}}} is not a reference (request, inputs.NAME, "
                    "steps.ID.output.FIELD)"
                )
            if match.group(1) not in seen:
                raise PlanError(
                    f"{where}.inputs: ${{{ref}}} names a step that does not come before it"
                )
        contract = raw.get("capability_contract", {})
        steps.append(
            Step(
                step_id=step_id,
                capability=raw["capability"],
                inputs=dict(raw["inputs"]),
                on_failure=raw.get("on_failure", "fail"),
                required_inputs=tuple(contract.get("required_inputs", ())),
                required_outputs=tuple(contract.get("required_outputs", ())),
                coverage_confidence=float(raw.get("coverage_confidence", 1.0)),
                coverage_rationale=raw.get("coverage_rationale", ""),
                tool=raw.get("tool") or None,
            )
        )
        seen.add(step_id)
    return Plan(goal=doc.get("goal") or request, steps=steps)


class Unresolved(LookupError):
    """A reference whose value is not there (a skipped or failed step, a missing field)."""


def _lookup(ref: str, request: str, inputs: dict[str, Any], outputs: dict[str, Any]) -> Any:
    if ref == "request":
        return request
    if ref.startswith("inputs."):
        name = ref[len("inputs.") :]
        if name not in inputs:
            raise Unresolved(f"no value for the input {name!r}")
        return inputs[name]
    match = _STEP_REF.match(ref)
    if match is None:
        raise Unresolved(f"${{{ref}}} is not a reference")
    step_id, path = match.group(1), match.group(2)
    if step_id not in outputs:
        raise Unresolved(f"step {step_id!r} gave no output (it was skipped or failed)")
    value = outputs[step_id]
    for part in (path or "").split(".") if path else []:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise Unresolved(f"step {step_id!r} gave no field {path!r}")
    return value


def fill(value: Any, request: str, inputs: dict[str, Any], outputs: dict[str, Any]) -> Any:
    """A step's inputs with every reference replaced by its value."""
    if isinstance(value, str):
        whole = REFERENCE.fullmatch(value.strip())
        if whole:
            return _lookup(whole.group(1).strip(), request, inputs, outputs)

        def text(match: re.Match[str]) -> str:
            found = _lookup(match.group(1).strip(), request, inputs, outputs)
            return found if isinstance(found, str) else str(found)

        return REFERENCE.sub(text, value)
    if isinstance(value, dict):
        return {k: fill(v, request, inputs, outputs) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, request, inputs, outputs) for v in value]
    return value
