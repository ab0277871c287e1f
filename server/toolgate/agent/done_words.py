"""What a run did, in words a person reads: "read calc.py, edited calc.py (+1 −1), ran the tests".

Each call that succeeded is said by its tool's own label (`Tool.did`), with what came of it: the
lines a change landed, the tests' figures. Built from the run log's steps and events, like the
rest of the account; the machine-readable list (`done`: call ids and capabilities) stays beside
it in the run log, `run_finished` and `--json`.
"""

from __future__ import annotations

from typing import Any

from toolgate.agent.events import PROPOSAL_CREATED, PROPOSAL_RESOLVED, logged_type
from toolgate.review.diff import hunk_line_counts
from toolgate.tools.registry import ToolRegistry

_LANDED = ("accepted", "partially_accepted")


def done_words(
    events: list[dict[str, Any]], steps: list[dict[str, Any]], tools: ToolRegistry
) -> list[str]:
    """One phrase per thing the run did, in order; a phrase said again is counted, not repeated."""
    lines = _lines_landed(events)
    said: dict[str, int] = {}
    for step in steps:
        for call in step.get("calls") or []:
            result = call.get("result") or {}
            if not result.get("success") or not call.get("name"):
                continue
            tool = tools.get(str(call["name"]))
            arguments = call.get("arguments") or {}
            phrase = tool.did(arguments) if tool is not None else f"used {call['name']}"
            detail = lines.get(str(call.get("proposal_id"))) or _tests(result.get("data"))
            phrase += f" ({detail})" if detail else ""
            said[phrase] = said.get(phrase, 0) + 1
    return [phrase if n == 1 else f"{phrase} ×{n}" for phrase, n in said.items()]


def _lines_landed(events: list[dict[str, Any]]) -> dict[str, str]:
    """Proposal id → "+added −removed" of the hunks that landed ("partly" when not all did)."""
    created: dict[str, list[tuple[int, int]]] = {}
    landed: dict[str, str] = {}
    for event in events:
        kind = logged_type(event)
        proposal = str(event.get("proposal_id"))
        if kind == PROPOSAL_CREATED:
            created[proposal] = hunk_line_counts(str(event.get("diff", "")))
        elif kind == PROPOSAL_RESOLVED and event.get("status") in _LANDED:
            counts = created.get(proposal, [])
            applied = event.get("hunks_applied")
            whole = event.get("status") == "accepted" or applied is None
            chosen = [
                counts[i]
                for i in (range(len(counts)) if whole else applied or [])
                if 0 <= i < len(counts)
            ]
            added, removed = sum(a for a, _ in chosen), sum(r for _, r in chosen)
            landed[proposal] = f"+{added} −{removed}" + ("" if whole else ", partly")
    return landed


def _tests(data: Any) -> str:
    """A test run's figures from its result ("3 passed, 1 failed"); "" for any other result."""
    summary = data.get("summary") if isinstance(data, dict) else None
    if not isinstance(summary, dict) or "passed" not in summary:
        return ""
    parts = [f"{summary.get('passed', 0)} passed"]
    for key, word in (("failed", "failed"), ("errors", "error"), ("skipped", "skipped")):
        count = summary.get(key)
        if count:
            plural = "s" if key == "errors" and count != 1 else ""
            parts.append(f"{count} {word}{plural}")
    return ", ".join(parts)
