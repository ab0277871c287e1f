"""One event bus: every step of a run is an event, and sinks subscribe to them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolgate.agent.redact import Redactor

log = logging.getLogger(__name__)

RUN_STARTED = "run_started"
RUN_FINISHED = "run_finished"
LLM_CALL = "llm_call"
ASSISTANT_TEXT = "assistant_text"
ASSISTANT_REASONING = "assistant_reasoning"  # thinking the server streams apart from the text
TOOL_CALL_PROPOSED = "ToolCallProposed"
TOOL_CALL_DECIDED = "ToolCallDecided"
TOOL_CALL_EXECUTED = "ToolCallExecuted"
TOOL_CALL_PARSE_ERROR = "ToolCallParseError"
PROPOSAL_CREATED = "ProposalCreated"
PROPOSAL_RESOLVED = "ProposalResolved"
MODE_CHANGED = "ToolCallingModeChanged"
TESTS_FINISHED = "TestsFinished"
NOTICE = "notice"
TOOL_PROGRESS = "ToolProgress"
CONTEXT_FITTED = "context_fitted"  # older outputs elided or turns summarised for the window


@dataclass(frozen=True)
class Event:
    """Something that happened in a run."""

    type: str
    run_id: str
    fields: dict[str, Any] = field(default_factory=dict)
    time: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to logs and streamed to front ends."""
        return {"type": self.type, "run_id": self.run_id, "time": self.time, **self.fields}


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
