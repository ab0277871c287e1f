"""A run's events as short progress lines for the caller of an agent tool."""

from __future__ import annotations

from toolgate.agent.events import (
    LLM_CALL,
    PROPOSAL_CREATED,
    PROPOSAL_RESOLVED,
    RUN_FINISHED,
    RUN_STARTED,
    TOOL_CALL_PROPOSED,
    Event,
)


def describe(event: Event) -> str | None:
    """One line for the events worth telling a waiting caller; None for the rest."""
    fields = event.fields
    if event.type == RUN_STARTED:
        return f"run {event.run_id} started"
    if event.type == LLM_CALL:
        return "asking the model"
    if event.type == TOOL_CALL_PROPOSED:
        arguments = fields.get("raw_args") or {}
        target = arguments.get("path") or arguments.get("command") or ""
        return f"{fields.get('tool_name', 'a tool')} {target}".strip()
    if event.type == PROPOSAL_CREATED:
        return f"proposed a change to {fields.get('path', 'a file')}"
    if event.type == PROPOSAL_RESOLVED:
        return f"the change was {fields.get('status', 'resolved')}"
    if event.type == RUN_FINISHED:
        return f"run {event.run_id} {fields.get('status', 'ended')}"
    return None
