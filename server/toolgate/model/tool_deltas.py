"""Native tool calls put together from the pieces a stream sends them in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class NativeCall:
    """A native tool call as streamed: arguments still a JSON string."""

    id: str
    name: str
    arguments: str = ""


class ToolCallDeltas:
    """The native calls of one answer, assembled from its chunks' `tool_calls` deltas.

    Servers split a call their own way. Most send its id and name in the first delta and its
    arguments in pieces after it, every delta carrying the call's `index`; some repeat the
    whole name in every delta; some send the id only later; some send no index at all, each
    such delta being a call of its own.
    """

    def __init__(self) -> None:
        self._calls: dict[int, NativeCall] = {}

    def __bool__(self) -> bool:
        """Whether any call has begun."""
        return bool(self._calls)

    def add(self, delta: Any) -> None:
        """Take one tool-call delta (the openai package's `ChoiceDeltaToolCall`)."""
        index = delta.index if delta.index is not None else len(self._calls)
        call = self._calls.setdefault(index, NativeCall(id="", name=""))
        if delta.id:
            call.id = delta.id
        function = delta.function
        if function is not None:
            # Some servers repeat the whole name in every delta: set, never append.
            if function.name:
                call.name = function.name
            if function.arguments:
                call.arguments += function.arguments

    def add_whole(self, index: int, call: NativeCall) -> None:
        """Take a call an unstreamed answer gave whole, at its place in the answer."""
        self._calls[index] = call

    def calls(self) -> list[NativeCall]:
        """The calls in the order of their index, each with an id (`call_N` where none came)."""
        ordered = [self._calls[i] for i in sorted(self._calls)]
        for n, call in enumerate(ordered):
            call.id = call.id or f"call_{n}"
        return ordered
