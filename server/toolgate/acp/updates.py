"""What a session's turn shows the editor: run events → ordered `session/update` notifications."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from acp import helpers
from acp.agent.connection import AgentSideConnection

from toolgate.acp import convert
from toolgate.agent.events import (
    RUN_FINISHED,
    TESTS_FINISHED,
    TOOL_CALL_DECIDED,
    TOOL_CALL_EXECUTED,
    TOOL_CALL_PROPOSED,
    Event,
)

log = logging.getLogger(__name__)


class Updates:
    """`session/update` notifications sent in the order the run produced them."""

    def __init__(self, conn: AgentSideConnection) -> None:
        self.conn = conn
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    def put(self, session_id: str, update: Any) -> None:
        """Queue one update (from a synchronous event sink)."""
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._send())
        self.queue.put_nowait((session_id, update))

    async def _send(self) -> None:
        while True:
            session_id, update = await self.queue.get()
            try:
                await self.conn.session_update(session_id=session_id, update=update)
            except Exception as exc:  # a client gone mid-turn: the run goes on to its end
                log.debug("session/update not sent: %s", exc)
            finally:
                self.queue.task_done()

    async def flush(self) -> None:
        """Wait until everything queued so far is sent."""
        await self.queue.join()

    async def close(self) -> None:
        """Stop sending."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


class RunEvents:
    """A run's events → `session/update` notifications for one session."""

    def __init__(self, updates: Updates, session_id: str, root: Path) -> None:
        self.updates = updates
        self.session_id = session_id
        self.root = root
        self.tests: dict[str, str] = {}  # call id → the test summary shown when it ends
        self.current_call: str | None = None
        self.failure: str | None = None

    def text(self, run_id: str, text: str) -> None:
        """Streamed answer text, coalesced."""
        self.updates.put(self.session_id, helpers.update_agent_message_text(text))

    def __call__(self, event: Event) -> None:
        """Translate one event."""
        f = event.fields
        sid = self.session_id
        if event.type == TOOL_CALL_PROPOSED:
            self.current_call = str(f["call_id"])
            args = f.get("raw_args") or {}
            self.updates.put(
                sid, convert.started(self.root, self.current_call, f["tool_name"], args)
            )
        elif event.type == TOOL_CALL_DECIDED and f.get("decision") == "auto":
            self.updates.put(sid, convert.progress(str(f["call_id"]), "in_progress"))
        elif event.type == TESTS_FINISHED and self.current_call is not None:
            self.tests[self.current_call] = convert.tests_summary(
                f.get("summary") or {}, int(f.get("failures") or 0)
            )
        elif event.type == TOOL_CALL_EXECUTED:
            call_id = str(f["call_id"])
            content: list[Any] = []
            if call_id in self.tests:
                content.append(convert.text_content(self.tests.pop(call_id)))
            if f.get("error"):
                content.append(convert.text_content(str(f["error"])))
            status = "completed" if f.get("success") else "failed"
            self.updates.put(sid, convert.progress(call_id, status, content or None))
        elif event.type == RUN_FINISHED and f.get("status") == "failed":
            self.failure = str(f.get("reason") or "the run failed")
            self.updates.put(
                sid, helpers.update_agent_message_text(f"\n\nThe turn failed: {self.failure}")
            )
