"""One event bus: every step of a run is an event, and sinks subscribe to them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from toolgate.agent.redact import Redactor

log = logging.getLogger(__name__)

RUN_STARTED = "run_started"
RUN_FINISHED = "run_finished"
LLM_CALL = "llm_call"
ASSISTANT_TEXT = "assistant_text"
ASSISTANT_REASONING = "assistant_reasoning"  # thinking the server streams apart from the text
TOOL_CALL_PROPOSED = "tool_call_proposed"
TOOL_CALL_DECIDED = "tool_call_decided"
TOOL_CALL_EXECUTED = "tool_call_executed"
TOOL_CALL_PARSE_ERROR = "tool_call_parse_error"
PROPOSAL_CREATED = "proposal_created"
PROPOSAL_RESOLVED = "proposal_resolved"
MODE_CHANGED = "tool_calling_mode_changed"
TESTS_FINISHED = "tests_finished"
NOTICE = "notice"
TOOL_PROGRESS = "tool_progress"
CONTEXT_FITTED = "context_fitted"  # older outputs elided or turns summarised for the window
LLM_USAGE = "llm_usage"  # the tokens the endpoint said one request used
RULES_USED = "rules_used"  # rules files attached to a result for the files a call touched
# The `mode` of an `llm_call` / `llm_usage` made by a latent tool's answer, inside a tool call.
LATENT_REQUEST = "latent"

# Logs written before event names were snake_case: readers map these to today's names.
LEGACY_NAMES = {
    "ToolCallProposed": TOOL_CALL_PROPOSED,
    "ToolCallDecided": TOOL_CALL_DECIDED,
    "ToolCallExecuted": TOOL_CALL_EXECUTED,
    "ToolCallParseError": TOOL_CALL_PARSE_ERROR,
    "ProposalCreated": PROPOSAL_CREATED,
    "ProposalResolved": PROPOSAL_RESOLVED,
    "ToolCallingModeChanged": MODE_CHANGED,
    "TestsFinished": TESTS_FINISHED,
    "ToolProgress": TOOL_PROGRESS,
}


def iso_utc(ts: float | None = None) -> str:
    """A moment (now by default) as ISO-8601 UTC to the millisecond, as every log writes it."""
    moment = datetime.fromtimestamp(time.time() if ts is None else ts, timezone.utc)
    return moment.isoformat(timespec="milliseconds")


def logged_type(event: dict[str, Any]) -> str:
    """A logged event's type under today's name, whichever Toolgate wrote the log."""
    kind = str(event.get("type", ""))
    return LEGACY_NAMES.get(kind, kind)


@dataclass(frozen=True)
class Event:
    """Something that happened in a run."""

    type: str
    run_id: str
    fields: dict[str, Any] = field(default_factory=dict)
    time: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to logs and streamed to front ends."""
        return {"type": self.type, "run_id": self.run_id, "time": iso_utc(self.time), **self.fields}


Sink = Callable[[Event], None]


class EventBus:
    """Fan events out to subscribers; a failing sink never breaks the run."""

    def __init__(self) -> None:
        self._sinks: list[Sink] = []
        # Runs add their API keys here: no event any sink sees may carry one (diffs, answers…).
        self.redactor = Redactor()

    def subscribe(self, sink: Sink) -> Callable[[], None]:
        """Add a sink; returns a function that removes it."""
        self._sinks.append(sink)
        return lambda: self._sinks.remove(sink) if sink in self._sinks else None

    def emit(self, type_: str, run_id: str, **fields: Any) -> Event:
        """Publish an event to every sink."""
        event = Event(type=type_, run_id=run_id, fields=self.redactor.deep(fields))
        for sink in list(self._sinks):
            try:
                sink(event)
            except Exception:  # a sink's bug must not end the run
                log.exception("event sink failed on %s", type_)
        return event
