"""The events of `toolgate mcp --http`'s SSE streams, kept so a client that lost one resumes it.

A client that reconnects with `Last-Event-ID` gets what its stream carried after that event.
The store is in memory and bounded: the oldest events go first, and a client that asks for one
already gone gets nothing replayed (its request then fails or times out on its side, as when the
server restarted).
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any

# Events kept across all sessions (a few MB at most: results are capped before they are sent).
MAX_EVENTS = 5_000


def event_store(max_events: int = MAX_EVENTS) -> Any:
    """An SDK `EventStore` that keeps the last `max_events` events in memory."""
    from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
    from mcp_types import JSONRPCMessage

    class MemoryEventStore(EventStore):
        def __init__(self) -> None:
            self._ids = itertools.count(1)
            # event id → (stream id, message or None for a stream's priming event)
            self._events: OrderedDict[str, tuple[str, JSONRPCMessage | None]] = OrderedDict()

        async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
            event_id = str(next(self._ids))
            self._events[event_id] = (stream_id, message)
            while len(self._events) > max_events:
                self._events.popitem(last=False)
            return event_id

        async def replay_events_after(
            self, last_event_id: str, send_callback: EventCallback
        ) -> str | None:
            known = self._events.get(last_event_id)
            if known is None:
                return None
            stream_id = known[0]
            after = int(last_event_id)
            for event_id, (stream, message) in list(self._events.items()):
                if stream == stream_id and int(event_id) > after and message is not None:
                    await send_callback(EventMessage(message, event_id))
            return stream_id

    return MemoryEventStore()
