"""What a session's turn shows the editor: run events → ordered `session/update` notifications."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import helpers
from acp.agent.connection import AgentSideConnection

from toolgate.acp import convert, plan, results
from toolgate.acp.thoughts import ThinkSplitter
from toolgate.agent.events import (
    LATENT_REQUEST,
    LLM_CALL,
    RULES_USED,
    RUN_FINISHED,
    RUN_STARTED,
    TOOL_CALL_DECIDED,
    TOOL_CALL_EXECUTED,
    TOOL_CALL_PROPOSED,
    Event,
)
from toolgate.records import ToolCall, ToolResult
from toolgate.tools.schema import Tool

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


class CallIds:
    """The tool call ids the editor sees: unique in the session, as ACP wants them.

    A server that gives no ids, or the same ones each answer (`call_0`…), would otherwise
    make the editor draw a later call into an earlier call's card.
    """

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.current: dict[str, str] = {}  # the engine's id → the editor's, latest call

    def begin(self, call_id: str) -> str:
        """The editor's id for a call just proposed."""
        shown, n = call_id, 1
        while shown in self.used:
            n += 1
            shown = f"{call_id}~{n}"
        self.used.add(shown)
        self.current[call_id] = shown
        return shown

    def of(self, call_id: str) -> str:
        """The editor's id for the latest call with the engine's id."""
        return self.current.get(call_id, call_id)


class RunEvents:
    """A run's events → `session/update` notifications for one session."""

    def __init__(self, updates: Updates, session_id: str, root: Path, ids: CallIds) -> None:
        self.updates = updates
        self.ids = ids
        self.session_id = session_id
        self.root = root
        self.shown: dict[str, results.Shown] = {}  # call id → what its result shows
        self.planning: set[str] = set()  # update_plan calls: shown as the plan, not as calls
        self.failure: str | None = None
        self.think = ThinkSplitter()
        # The facts of a tool by its name: the run's own tools once it is built.
        self.tools: Callable[[str], Tool | None] = plan.registry().get

    def text(self, run_id: str, text: str) -> None:
        """Streamed answer text, coalesced; a leading `<think>` block goes out as thought."""
        self._pieces(self.think.feed(text))

    def reasoning(self, run_id: str, text: str) -> None:
        """The thinking a server streams apart from the text, coalesced."""
        self.updates.put(self.session_id, helpers.update_agent_thought_text(text))

    def _pieces(self, pieces: list[tuple[str, str]]) -> None:
        for kind, piece in pieces:
            if kind == "thought":
                self.updates.put(self.session_id, helpers.update_agent_thought_text(piece))
            else:
                self.updates.put(self.session_id, helpers.update_agent_message_text(piece))

    def result(self, call: ToolCall, result: ToolResult) -> None:
        """Keep what a finished call shows (the turn hands it over before the call's event).

        The result comes with every secret the run knows taken out.
        """
        found = results.shown(result, self.root)
        if found is not None:
            self.shown[self.ids.of(call.id)] = found

    def __call__(self, event: Event) -> None:
        """Translate one event."""
        f = event.fields
        sid = self.session_id
        if event.type == LLM_CALL and f.get("mode") == LATENT_REQUEST:
            return  # a latent answer's request: no answer of the session's
        if event.type == LLM_CALL:
            # Each answer of the model may open with its own thinking.
            self._pieces(self.think.finish())
            self.think = ThinkSplitter()
        elif event.type == TOOL_CALL_PROPOSED:
            call_id = self.ids.begin(str(f["call_id"]))
            args = f.get("raw_args") or {}
            if f["tool_name"] == plan.NAME:
                self.planning.add(call_id)
                update = plan.plan_update(args)
                if update is not None:
                    self.updates.put(sid, update)
                return
            name = str(f["tool_name"])
            self.updates.put(sid, convert.started(self.root, call_id, name, args, self.tools(name)))
        elif event.type == TOOL_CALL_DECIDED and f.get("decision") == "auto":
            call_id = self.ids.of(str(f["call_id"]))
            if call_id not in self.planning:
                self.updates.put(sid, convert.progress(call_id, "in_progress"))
        elif event.type == TOOL_CALL_EXECUTED:
            call_id = self.ids.of(str(f["call_id"]))
            found = self.shown.pop(call_id, None)
            if call_id in self.planning:
                return
            content: list[Any] = []
            if found is not None:
                content.append(convert.text_content(found.text))
            if f.get("error"):
                content.append(convert.text_content(str(f["error"])))
            status = "completed" if f.get("success") else "failed"
            locations = found.locations if found is not None else None
            self.updates.put(sid, convert.progress(call_id, status, content or None, locations))
        elif event.type in (RUN_STARTED, RULES_USED) and f.get("rules"):
            # Which rules files the turn follows, as a thought: said, not part of the answer.
            said = "Following" if event.type == RUN_STARTED else "Following, for the files touched,"
            text = f"{said} {', '.join(f['rules'])}.\n"
            self.updates.put(sid, helpers.update_agent_thought_text(text))
        elif event.type == RUN_FINISHED:
            self._pieces(self.think.finish())
            if f.get("status") == "failed":
                self.failure = str(f.get("reason") or "the run failed")
                self.updates.put(
                    sid, helpers.update_agent_message_text(f"\n\nThe turn failed: {self.failure}")
                )
