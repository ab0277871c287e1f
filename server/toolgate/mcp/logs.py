"""`toolgate mcp`'s log notifications: what a call did, at the level its client set.

The server declares the `logging` capability and answers `logging/setLevel`; each session
(each `Mcp-Session-Id` over HTTP, the one connection over stdio) keeps its own level. A call's
lines — the gate's decision on a low-level tool, the run's progress inside an agent tool — go
out as `notifications/message` on the call's own stream, in order, before its result.

From protocol 2026-07-28 there is no `logging/setLevel`: a request asks for its lines in its
`_meta`, and the SDK drops what it did not ask for, so no level of ours stands in the way.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

log = logging.getLogger(__name__)

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# Until a client sets a level: everything but the debug lines.
DEFAULT_LEVEL = "info"
LOGGER = "toolgate"
# Sessions whose level is remembered (the oldest is forgotten first; it falls back to the default).
_MAX_SESSIONS = 1_000


def _session_key(ctx: Any) -> str | None:
    """The session a request belongs to: its `Mcp-Session-Id` over HTTP, None over stdio."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    value = headers.get("mcp-session-id")
    return str(value) if value else None


def _modern(ctx: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS


class LogLevels:
    """The level each session set with `logging/setLevel`."""

    def __init__(self) -> None:
        self._levels: OrderedDict[str | None, str] = OrderedDict()

    def threshold(self, ctx: Any) -> str:
        """The lowest level sent to this request's session."""
        if _modern(ctx):
            return LEVELS[0]  # the request's own `_meta` decides, in the SDK
        return self._levels.get(_session_key(ctx), DEFAULT_LEVEL)

    def allows(self, ctx: Any, level: str) -> bool:
        """Whether a line at `level` goes to this request's session."""
        return LEVELS.index(level) >= LEVELS.index(self.threshold(ctx))

    async def on_set_level(self, ctx: Any, params: Any) -> Any:
        """`logging/setLevel`: from now on this session gets lines at that level and above."""
        import mcp_types as types

        key = _session_key(ctx)
        self._levels[key] = str(params.level)
        self._levels.move_to_end(key)
        while len(self._levels) > _MAX_SESSIONS:
            self._levels.popitem(last=False)
        return types.EmptyResult()


class CallLog:
    """The log lines of one call: `say(level, text)` queues a line; they are sent in order.

    Queuing keeps `say` usable from the engine's synchronous event callbacks; `flush()` waits
    until every queued line has been sent, and leaving `call_log` does the same.
    """

    def __init__(self, ctx: Any, levels: LogLevels) -> None:
        self._ctx = ctx
        self._levels = levels
        self._send, self._receive = anyio.create_memory_object_stream[tuple[str, str]](math.inf)
        self._pending = 0
        self._idle = anyio.Event()
        self._idle.set()

    def __call__(self, level: str, text: str) -> None:
        """Queue a line, if the session's level lets it through."""
        if not self._levels.allows(self._ctx, level):
            return
        try:
            self._send.send_nowait((level, text))
        except anyio.ClosedResourceError:  # a job still talking after its call ended
            return
        if self._pending == 0:
            self._idle = anyio.Event()
        self._pending += 1

    async def flush(self) -> None:
        """Wait until the lines queued so far are sent."""
        await self._idle.wait()

    async def _pump(self) -> None:
        async with self._receive:
            async for level, text in self._receive:
                try:
                    await self._ctx.session.send_log_message(
                        level, text, logger=LOGGER, related_request_id=self._ctx.request_id
                    )
                except Exception as exc:  # a log line is best effort; the call goes on
                    log.debug("log notification failed: %s", exc)
                self._pending -= 1
                if self._pending == 0:
                    self._idle.set()

    def _close(self) -> None:
        self._send.close()


@asynccontextmanager
async def call_log(ctx: Any, levels: LogLevels) -> AsyncIterator[CallLog]:
    """The log of one call; its lines are all sent before the block is left."""
    say = CallLog(ctx, levels)
    async with anyio.create_task_group() as group:
        group.start_soon(say._pump)
        try:
            yield say
        finally:
            say._close()
