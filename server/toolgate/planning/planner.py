"""Asking the model for a plan, checked against the published plan schema.

The prompt carries the schema and the registry's capabilities; the answer is one JSON object,
and an invalid one gets one corrective turn.
"""

from __future__ import annotations

import json
from typing import Any

from toolgate.model import structured
from toolgate.model.client import ChatModel
from toolgate.planning.plan import Plan, PlanError, parse_plan
from toolgate.schemas import PLAN, load_schema
from toolgate.tools.capabilities import CapabilityRegistry

PROMPT = """You plan a task as steps, each named by the capability it needs (domain.action).
Do not do the task: answer with one JSON object only, no prose, matching this JSON Schema:

{schema}

A step's inputs are literal values or references: "${{request}}" (the task's text) or
"${{steps.ID.output.FIELD}}" (a field of an earlier step's output). Set coverage_confidence
(0..1) to how sure you are that the capability covers the step, and say why in
coverage_rationale. List in capability_contract the inputs the tool must accept and the outputs
later steps need. When no capability below fits a step, still write the step with the
capability it needs; it will be reported as missing, never improvised.

Capabilities available (capability: tool, inputs -> outputs):
{capabilities}
"""


def capability_lines(registry: CapabilityRegistry) -> str:
    """One line per capability and tool, for the prompt."""
    lines = []
    for provider in registry.providers:
        inputs = ", ".join((provider.input_schema or {}).get("properties", {}))
        outputs = ", ".join((provider.output_schema or {}).get("properties", {}))
        for capability in provider.capabilities:
            lines.append(f"- {capability}: {provider.name}, ({inputs}) -> ({outputs})")
    return "\n".join(sorted(lines)) or "(none)"


def extract_json(text: str) -> Any:
    """The JSON object in a model's answer (see `toolgate.model.structured.extract_json`)."""
    try:
        return structured.extract_json(text)
    except structured.NoJson:
        raise PlanError("plan: the model's answer holds no JSON object") from None


async def ask_for_plan(
    model: ChatModel,
    task: str,
    registry: CapabilityRegistry,
    *,
    max_calls: int = 2,
    context: str = "",
) -> tuple[Plan, int]:
    """The model's plan for a task and the number of model calls it took.

    `context` (what the person attached with `@` mentions) goes before the task's words; the
    plan's request stays the person's words alone.

    Raises PlanError when no valid plan came back within `max_calls` calls.
    """
    system = PROMPT.format(
        schema=json.dumps(load_schema(PLAN), indent=1), capabilities=capability_lines(registry)
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{context}\n\n{task}" if context else task},
    ]
    calls = 0
    error: PlanError | None = None
    while calls < max_calls:
        calls += 1
        deltas = [delta async for delta in model.stream(messages, None)]
        refusal = "".join(delta.refusal for delta in deltas).strip()
        if refusal:  # asking again would only be refused again
            raise PlanError(f"no plan: the model refused: {refusal}")
        text = "".join(delta.text for delta in deltas)
        try:
            return parse_plan(extract_json(text), request=task), calls
        except PlanError as exc:
            error = exc
            messages += [
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": f"That is not a valid plan ({exc}). Answer with the corrected "
                    "JSON object only.",
                },
            ]
    assert error is not None
    raise error
