"""A turn of a session, as a front end holds it: its claim, its hooks, how it ended early.

A front end takes from here what its hooks are handed too: the `TestRun` of `on_test_run`,
and `not_run_reason`, which says why tests that were asked for did not run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from toolgate.agent.events import RUN_FINISHED, EventBus
from toolgate.agent.loop import AgentRun, RunOutcome
from toolgate.agent.redact import Redactor
from toolgate.conversation.history import Conversation
from toolgate.conversation.store import SessionLock
from toolgate.records import ToolCall, ToolResult, new_id
from toolgate.testing.results import TestRun as TestRun
from toolgate.testing.verdict import not_run_reason as not_run_reason


@dataclass
class Claim:
    """A session held for one turn: nobody else continues it until the turn ends.

    It is also the front end's handle on that turn, from the moment the session is claimed:
    `run_id` is the id its run will have, and `cancel` stops the turn wherever it is.
    """

    session_id: str
    conversation: Conversation
    lock: SessionLock
    run_id: str = field(default_factory=lambda: new_id("run"))
    run: AgentRun | None = None  # the turn's run, while it runs
    cancelled: str | None = None  # why the turn was stopped, once somebody stopped it
    _setup: asyncio.Future[Turn] | None = field(default=None, repr=False)

    def cancel(self, reason: str = "cancelled by the person") -> None:
        """Stop the turn: its set-up at once (whatever it started stops), or its run."""
        self.cancelled = self.cancelled or reason
        if self.run is not None:
            self.run.cancel(reason)
        elif self._setup is not None:
            self._setup.cancel()


@dataclass
class TurnHooks:
    """What a front end lends one turn, besides its reviewer and its event bus."""

    # Each finished call and its result, before the call's event, with every secret the run
    # knows taken out (ACP keeps what the call shows for the editor).
    on_result: Callable[[ToolCall, ToolResult], None] | None = None
    # Before a file is read (ACP fetches the editor's text of it into the buffers).
    before_read: Callable[[str], Awaitable[None]] | None = None
    # Each test run as it ends (the language server publishes its failures as diagnostics).
    on_test_run: Callable[[Any], None] | None = None
    # The run once it is built, before it starts (ACP reads the facts of the run's own tools).
    on_run: Callable[[AgentRun], None] | None = None


@dataclass
class Turn:
    """One run continuing a session, from its claim to its end."""

    claim: Claim
    run: AgentRun | None = None
    notices: list[str] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        """The session this turn continues."""
        return self.claim.session_id


def ended_in_set_up(claim: Claim, bus: EventBus) -> RunOutcome:
    """A turn cancelled before its run existed: its end said on the bus, as a run says it."""
    reason = f"{claim.cancelled or 'cancelled'} while the run was being set up"
    bus.emit(RUN_FINISHED, claim.run_id, status="cancelled", reason=reason, answer=None)
    return RunOutcome(claim.run_id, "cancelled", reason)


def redacted(
    on_result: Callable[[ToolCall, ToolResult], None], redactor: Redactor
) -> Callable[[ToolCall, ToolResult], None]:
    """`on_result`, given a copy of each result with every secret the run knows taken out."""

    def call(call: ToolCall, result: ToolResult) -> None:
        error = redactor.text(result.error) if result.error else result.error
        on_result(call, replace(result, data=redactor.deep(result.data), error=error))

    return call
