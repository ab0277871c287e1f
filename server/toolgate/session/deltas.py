"""The assistant's streamed text, coalesced for a screen: at most about 20 pieces a second.

A model streams a token or a few characters at a time; a chat view redraws markdown on each
piece it gets. `TextDeltas` sits on a run's event bus, gathers the `assistant_text` pieces and
hands on what was generated since the last hand-over, at most every `interval` seconds — and
always before any other event of the run, so text never arrives after the call it preceded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from toolgate.agent.events import ASSISTANT_TEXT, Event

INTERVAL = 0.05  # 20 a second


class TextDeltas:
    """A bus sink that calls `send(run_id, text)` with coalesced pieces of streamed text."""

    def __init__(
        self,
        send: Callable[[str, str], None],
        interval: float = INTERVAL,
        kind: str = ASSISTANT_TEXT,  # or ASSISTANT_REASONING: the model's streamed thinking
    ) -> None:
        self._send = send
        self._kind = kind
        self._interval = interval
        self._pending: dict[str, str] = {}
        self._sent_at = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, event: Event) -> None:
        """Take one event of the bus."""
        if event.type != self._kind:
            self.flush(event.run_id)  # what came before this event is said first
            return
        text = str(event.fields.get("text") or "")
        if not text:
            return
        self._pending[event.run_id] = self._pending.get(event.run_id, "") + text
        now = time.monotonic()
        if now - self._sent_at >= self._interval:
            self.flush(event.run_id)
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # no loop: the next event or flush() hands it on
            delay = self._interval - (now - self._sent_at)
            self._timer = loop.call_later(delay, self._flush_all)

    def _flush_all(self) -> None:
        self._timer = None
        for run_id in list(self._pending):
            self.flush(run_id)

    def flush(self, run_id: str) -> None:
        """Hand on what is gathered for a run now."""
        text = self._pending.pop(run_id, "")
        if not self._pending and self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if text:
            self._sent_at = time.monotonic()
            self._send(run_id, text)
