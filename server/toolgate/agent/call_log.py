"""A call as the run log and the conversation keep it."""

from __future__ import annotations

from typing import Any

from toolgate.agent.gate import GateOutcome
from toolgate.agent.retention import result_json
from toolgate.records import ToolCall, ToolResult
from toolgate.tools.schema import OTHER, Tool


def log_entry(
    call: ToolCall, outcome: GateOutcome, view: ToolResult, *, raw: bool
) -> dict[str, Any]:
    """A call as the run log keeps it: the result as the model read it (whole, when `raw`)."""
    stored = outcome.result if raw else view
    return {
        "id": call.id,
        "name": call.name,
        "arguments": outcome.arguments,
        "reasoning": outcome.reasoning,
        "syntax": call.syntax,
        "decision": outcome.decision,
        "proposal_id": outcome.proposal_id,
        "result": stored.to_dict(),
    }


def call_record(entry: dict[str, Any], view: ToolResult, tool: Tool | None) -> dict[str, Any]:
    """A call as the transcript keeps it: what was asked, what became of it, in one line."""
    decision = entry.get("decision")
    if decision in ("denied", "rejected"):
        status = decision
    else:
        status = "ok" if view.success else "failed"
    record = {
        "call_id": entry.get("id"),
        "name": entry.get("name"),
        "arguments": entry.get("arguments"),
        "status": status,
        "summary": _result_summary(view),
        "kind": tool.kind if tool is not None else OTHER,  # a client draws the call by it
    }
    if entry.get("proposal_id"):
        record["proposal_id"] = entry["proposal_id"]
    return record


def _result_summary(result: ToolResult) -> str:
    if result.error:
        return str(result.error).splitlines()[0][:200] if result.error else ""
    data = result.data
    if isinstance(data, dict):
        summary = data.get("summary")
        if isinstance(summary, dict):
            return ", ".join(f"{v} {k}" for k, v in summary.items() if v)[:200]
        if isinstance(summary, str):
            return summary[:200]
        for key in ("message", "status", "path"):
            if isinstance(data.get(key), str):
                return str(data[key])[:200]
    size = result.output_size_bytes or len(result_json(result))
    return f"{size} bytes"
