"""A model turn read off the stream: its words said as they come, its calls queued as they close.

The producer also holds the run's tool-calling mode, and switches it to text when the endpoint
refuses `tools` or the model writes its calls as text.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field, replace
from typing import Any

from toolgate.agent.events import ASSISTANT_REASONING, ASSISTANT_TEXT, MODE_CHANGED, EventBus
from toolgate.agent.gate import GateOutcome
from toolgate.agent.meter import RunMeter
from toolgate.agent.redact import Redactor
from toolgate.agent.request import RequestBuilder
from toolgate.agent.runlog import RunLog
from toolgate.calls import CallParseError, ParsedCall, StreamingCallParser
from toolgate.calls.reading import parser_for
from toolgate.config import ToolCalling
from toolgate.model.client import ChatModel, OpenAIChatModel, ToolsRejected
from toolgate.model.modes import AUTO, NATIVE, TEXT, ModeMemory
from toolgate.model.tool_deltas import NativeCall
from toolgate.records import ToolCall, ToolResult
from toolgate.tools.registry import ToolRegistry

# How often streamed prose is passed on in text mode: a screen needs no more, and the parser
# works prose out when it is asked for (calls are passed on the moment they close).
CONTENT_INTERVAL = 0.05

_call_ids = itertools.count(1)

# What the producer puts on the turn's queue: ("call", ToolCall), ("error", CallParseError),
# ("raise", Exception) and, last, ("done", None).
Item = tuple[str, Any]


@dataclass
class Turn:
    """One model turn: what it said, the calls it made and what became of them."""

    text: str = ""
    native: list[NativeCall] = field(default_factory=list)
    finish_reason: str | None = None
    refusal: str = ""  # what the model streamed as its refusal, apart from the text
    errors: list[CallParseError] = field(default_factory=list)
    outcomes: list[tuple[ToolCall, GateOutcome]] = field(default_factory=list)
    views: list[ToolResult] = field(default_factory=list)  # each result as the model reads it


def initial_mode(calling: ToolCalling, memory: ModeMemory, model: ChatModel) -> str:
    """The mode a run starts in: off, the configured one, or what was learned of the endpoint."""
    if not calling.enabled:
        return "off"
    if calling.mode != AUTO:
        return calling.mode  # an explicit mode is never overridden
    remembered = memory.get(model.base_url, model.model)
    return remembered or AUTO


def learn_tool_streaming(model: ChatModel, memory: ModeMemory) -> None:
    """Let the client skip streaming where the endpoint was found to need it, and learn it."""
    if not isinstance(model, OpenAIChatModel):
        return  # the embedded model and tests' fakes stream no tools over HTTP
    base_url, name = model.base_url, model.model
    model.stream_tools = memory.streams_tools(base_url, name)
    model.on_no_tool_streaming = lambda why: memory.remember_no_tool_streaming(base_url, name, why)


def logged_mode(mode: str) -> str:
    """A mode as the run log records it (auto is logged as native until it switches)."""
    return {AUTO: NATIVE, "off": "off"}.get(mode, mode)


class TurnProducer:
    """Streams one model turn into a `Turn`, putting each call on a queue as soon as it is known."""

    def __init__(
        self,
        *,
        run_id: str,
        mode: str,
        model: ChatModel,
        registry: ToolRegistry,
        calling: ToolCalling,
        memory: ModeMemory,
        runlog: RunLog,
        bus: EventBus,
        redact: Redactor,
        requests: RequestBuilder,
        meter: RunMeter,
    ) -> None:
        self.run_id = run_id
        self.mode = mode
        self.model = model
        self.registry = registry
        self.calling = calling
        self.memory = memory
        self.runlog = runlog
        self.bus = bus
        self.redact = redact
        self.requests = requests
        self.meter = meter
        self._turn_calls = 0
        self._content_at = 0.0

    async def produce(self, turn: Turn, queue: asyncio.Queue[Item], step: dict[str, Any]) -> None:
        """Stream the turn; end the queue with ("done", None), or ("raise", exc) on a failure."""
        try:
            await self._stream(turn, queue, step)
        except Exception as exc:
            queue.put_nowait(("raise", exc))
        else:
            queue.put_nowait(("done", None))

    async def _stream(self, turn: Turn, queue: asyncio.Queue[Item], step: dict[str, Any]) -> None:
        tools = self.requests.tool_list() if self.mode in (AUTO, NATIVE) else None
        full = await self.requests.build(self.mode, step)
        n = self.meter.count(logged_mode(self.mode))
        parser = self.parser() if self.mode == TEXT else None
        self._turn_calls = 0
        try:
            async for delta in self.model.stream(full, tools):
                if delta.text:
                    turn.text += delta.text
                    if parser is None:
                        self._say(delta.text)
                    else:
                        self._text_items(parser, parser.feed(delta.text), queue)
                if delta.reasoning:
                    self.bus.emit(
                        ASSISTANT_REASONING, self.run_id, text=self.redact.text(delta.reasoning)
                    )
                if delta.refusal:
                    turn.refusal += delta.refusal
                    self._say(delta.refusal)  # shown as the answer, never parsed for calls
                if delta.done:
                    turn.native = delta.calls
                    turn.finish_reason = delta.finish_reason
                    self.requests.learn(delta.prompt_tokens)
                    self.meter.used(delta, n, step)
        except ToolsRejected as exc:
            if self.mode != AUTO:
                raise
            self.switch(TEXT, f"the endpoint rejected the tools parameter: {exc}")
            turn.text, turn.refusal = "", ""
            await self._stream(turn, queue, step)
            return
        self._queue_calls(turn, queue, parser)

    def _queue_calls(
        self, turn: Turn, queue: asyncio.Queue[Item], parser: StreamingCallParser | None
    ) -> None:
        """Once the stream ended: the calls not yet queued (text mode's last, native calls)."""
        if parser is not None:
            self._text_items(parser, parser.finish(), queue, final=True)
            if self.calling.compact_prompt and not self._turn_calls:
                # The small embedded model puts every call in a code fence, which would mark
                # an example; it was told to write tool blocks, so its fenced calls are run
                # (through the gate like any other).
                for call in self.fenced(turn.text):
                    queue.put_nowait(self._text_item(call))
            return
        if turn.native:
            for native in turn.native:
                queue.put_nowait(self._native_item(native))
            return
        if self.mode == AUTO and turn.text:
            # Servers that ignore `tools` answer 200 with the call written as text.
            found = self.parser()
            items = found.feed(turn.text) + found.finish()
            if any(isinstance(i, ParsedCall) for i in items):
                self.switch(TEXT, "the model wrote its tool calls as text")
                for item in items:
                    queue.put_nowait(self._text_item(item))

    def fenced(self, text: str) -> list[ParsedCall]:
        """The calls that only a code fence kept from running."""
        unfenced = "\n".join(
            line for line in text.splitlines() if not line.lstrip().startswith("```")
        )
        parser = self.parser()
        items = parser.feed(unfenced) + parser.finish()
        return [replace(i, syntax=f"fenced_{i.syntax}") for i in items if isinstance(i, ParsedCall)]

    def parser(self) -> StreamingCallParser:
        """A fresh parser of calls written as text, for the run's tools."""
        return parser_for(self.registry.argument_schemas(), self.calling)

    def _text_items(
        self,
        parser: StreamingCallParser,
        items: list[Any],
        queue: asyncio.Queue[Item],
        *,
        final: bool = False,
    ) -> None:
        now = time.monotonic()
        if items or final or now - self._content_at >= CONTENT_INTERVAL:
            # the prose before a call is said before the call is handled
            self._content_at = now
            visible = parser.take_content()
            if visible:
                self._say(visible)
        for item in items:
            self._turn_calls += isinstance(item, ParsedCall)
            queue.put_nowait(self._text_item(item))

    def _text_item(self, item: ParsedCall | CallParseError) -> Item:
        if isinstance(item, CallParseError):
            return ("error", item)
        call = ToolCall(
            id=f"tc-{next(_call_ids)}",
            name=item.name,
            arguments=item.arguments,
            syntax=item.syntax,
            deprecated_syntax=item.deprecated_syntax,
            raw_excerpt=item.raw_excerpt,
        )
        return ("call", call)

    def _native_item(self, native: NativeCall) -> Item:
        raw = native.arguments.strip() or "{}"
        try:
            arguments = json.loads(raw)
        except ValueError as exc:
            arguments = {"__invalid_json__": raw, "__error__": str(exc)}
        return (
            "call",
            ToolCall(id=native.id, name=native.name, arguments=arguments, raw_excerpt=raw[:500]),
        )

    def switch(self, mode: str, reason: str) -> None:
        """Go on in `mode` (text) for the rest of the run, and remember it for the endpoint."""
        self.mode = mode
        self.memory.remember(self.model.base_url, self.model.model, mode, reason)
        self.runlog.set(tool_calling_mode=mode)
        self.bus.emit(MODE_CHANGED, self.run_id, mode=mode, reason=self.redact.text(reason))

    def _say(self, text: str) -> None:
        self.bus.emit(ASSISTANT_TEXT, self.run_id, text=self.redact.text(text))
