"""Counters derived from events, never kept by hand."""

from __future__ import annotations

from collections import Counter
from typing import Any

from toolgate.agent.events import (
    LLM_CALL,
    TOOL_CALL_EXECUTED,
    TOOL_CALL_PARSE_ERROR,
    TOOL_CALL_PROPOSED,
    Event,
)


class Metrics:
    """A sink that counts tool calls, executions and parse errors."""

    def __init__(self) -> None:
        self.proposed: Counter[str] = Counter()
        self.executed: Counter[tuple[str, bool]] = Counter()
        self.parse_errors = 0
        self.llm_calls = 0

    def __call__(self, event: Event) -> None:
        """Update the counters from one event."""
        if event.type == TOOL_CALL_PROPOSED:
            self.proposed[event.fields["tool_name"]] += 1
        elif event.type == TOOL_CALL_EXECUTED:
            self.executed[(event.fields["tool_name"], bool(event.fields["success"]))] += 1
        elif event.type == TOOL_CALL_PARSE_ERROR:
            self.parse_errors += 1
        elif event.type == LLM_CALL:
            self.llm_calls += 1

    def snapshot(self) -> dict[str, Any]:
        """The counters in a Prometheus-like shape."""
        return {
            "tool_calls_proposed_total": [
                {"labels": {"tool": tool}, "value": n} for tool, n in sorted(self.proposed.items())
            ],
            "tool_calls_executed_total": [
                {"labels": {"tool": tool, "success": str(ok).lower()}, "value": n}
                for (tool, ok), n in sorted(self.executed.items())
            ],
            "tool_call_parse_errors_total": self.parse_errors,
            "llm_calls_total": self.llm_calls,
        }

    def prometheus(self) -> str:
        """The counters in Prometheus text format."""
        lines = ["# TYPE tool_calls_proposed_total counter"]
        lines += [
            f'tool_calls_proposed_total{{tool="{t}"}} {n}' for t, n in sorted(self.proposed.items())
        ]
        lines.append("# TYPE tool_calls_executed_total counter")
        lines += [
            f'tool_calls_executed_total{{tool="{t}",success="{str(ok).lower()}"}} {n}'
            for (t, ok), n in sorted(self.executed.items())
        ]
        lines.append("# TYPE tool_call_parse_errors_total counter")
        lines.append(f"tool_call_parse_errors_total {self.parse_errors}")
        return "\n".join(lines) + "\n"
