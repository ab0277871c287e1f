"""What each model request of a run sends, kept inside the context budget."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from toolgate.agent.events import CONTEXT_FITTED, NOTICE, EventBus
from toolgate.agent.meter import RunMeter
from toolgate.agent.outcome import FAILED, INCOMPLETE, LIMIT, Stop
from toolgate.agent.redact import Redactor
from toolgate.agent.retention import fit_result, result_json
from toolgate.calls.prompt import compact_instructions, format_tool_result, text_mode_instructions
from toolgate.config import Limits, ToolCalling
from toolgate.conversation.budget import (
    MESSAGE_OVERHEAD,
    Budget,
    fit,
    message_bytes,
    summary_request,
)
from toolgate.conversation.history import Conversation
from toolgate.model.client import ChatModel, ModelError
from toolgate.model.modes import AUTO, NATIVE, TEXT
from toolgate.records import ToolResult
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import Tool

FINAL_ANSWER = Tool(
    name="final_answer",
    description="Finish the task: give your final answer to the person. Call it once, last.",
    compact="Give your final answer, once, last.",
    parameters={
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    },
)


class RequestBuilder:
    """The messages and tools of a run's requests, fitted to the model's window.

    With a budget, earlier turns are elided and, when that is not enough, replaced by a summary
    one more model request writes; a turn that alone does not fit ends the run. Without one
    (callers that manage the window themselves) every message is sent.
    """

    def __init__(
        self,
        *,
        run_id: str,
        base_prompt: str,
        conversation: Conversation,
        budget: Budget | None,
        registry: ToolRegistry,
        calling: ToolCalling,
        limits: Limits,
        model: ChatModel,
        bus: EventBus,
        redact: Redactor,
        meter: RunMeter,
    ) -> None:
        self.run_id = run_id
        self.base_prompt = base_prompt
        self.conversation = conversation
        self.budget = budget
        self.registry = registry
        self.calling = calling
        self.limits = limits
        self.model = model
        self.bus = bus
        self.redact = redact
        self.meter = meter
        self.sent_bytes = 0  # the size of the latest request, for the budget to learn from
        self.mode = TEXT  # the mode of the latest request
        self.viewed = 0  # bytes of the results already fitted since the latest request
        # The project's PreCompact hooks, run before earlier turns are summarised: set by the
        # session through `AgentRun.before_compact`.
        self.before_compact: Callable[[], Awaitable[None]] | None = None

    def system(self, mode: str) -> str:
        """The system prompt in `mode`: the text protocol's instructions in text mode.

        It stays the same for the whole session, so that a server that keeps the prompt it
        read last reads only what is new: nothing that changes between requests goes here
        (a summary of earlier turns opens the first message instead, see `_with_summary`).
        """
        if mode == TEXT and self.calling.compact_prompt:
            return self.base_prompt + "\n" + compact_instructions(self.tool_list(text=True))
        if mode == TEXT:
            tools = self.tool_list(text=True)
            syntax = self.calling.text_syntax
            return self.base_prompt + "\n" + text_mode_instructions(tools, syntax)
        return self.base_prompt

    def tool_list(self, *, text: bool = False) -> list[dict[str, Any]]:
        """The tools offered, as the API takes them (final_answer too, in native mode).

        With the compact prompt, each in its compact form (a short line and a bare schema) in
        native mode. Text mode lists signatures in any case and keeps each tool's first line
        there: with the short lines instead, the embedded model skipped steps it was asked for.
        """
        compact = bool(self.calling.compact_prompt) and not text
        tools = self.registry.openai_tools(compact=compact)
        if self.calling.final_answer_tool and not text:
            tools.append(FINAL_ANSWER.openai(compact=compact))
        return tools

    async def build(self, mode: str, step: dict[str, Any]) -> list[dict[str, Any]]:
        """The messages of the next request, kept inside the budget."""
        self.mode, self.viewed = mode, 0
        system = {"role": "system", "content": self.system(mode)}
        earlier, current = self.conversation.earlier(), self.conversation.current()
        if self.budget is None:
            messages = [e.message for e in [*earlier, *current]]
            return [system, *_for_mode(mode, self._with_summary(messages))]
        fixed = self._fixed_tokens(system, mode)
        fitted = fit(self.budget, fixed, earlier, current)
        summarised = None
        if not fitted.fits and earlier:
            summarised = await self._summarise(earlier, step)
            fixed = self._fixed_tokens(system, mode)
            fitted = fit(self.budget, fixed, [], self.conversation.current())
        self._record_fit(step, fitted.tokens, fitted.elided, summarised)
        if not fitted.fits and not self.budget.known:
            self.bus.emit(
                NOTICE,
                self.run_id,
                message=f"this request needs about {fitted.tokens} tokens, more than the "
                f"{self.budget.limit} a {self.budget.window}-token window leaves; the endpoint "
                "did not say its window, so it is sent anyway (set model.context_tokens)",
            )
        elif not fitted.fits:
            raise Stop(
                FAILED,
                f"this turn alone needs about {fitted.tokens} tokens, more than the "
                f"{self.budget.limit} the model's window of {self.budget.window} leaves for a "
                "request; start a new session or raise model.context_tokens",
            )
        self.sent_bytes = int(fixed * self.budget.bytes_per_token) + sum(
            message_bytes(m) for m in fitted.messages
        )
        return [system, *_for_mode(mode, self._with_summary(fitted.messages))]

    def _with_summary(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages with the summary of earlier turns before the first one's words.

        Not in the system prompt: that would change it, and with it the whole prompt a server
        kept, at every summary. The first message is a turn's user message (a turn opens with
        one, and no user message is ever elided); it stays first until the next summary.
        """
        note = self.conversation.summary_note().strip()
        if not note:
            return messages
        if messages and messages[0].get("role") == "user":
            first = messages[0]
            return [{**first, "content": f"{note}\n\n{first.get('content') or ''}"}, *messages[1:]]
        return [{"role": "user", "content": note}, *messages]

    def learn(self, prompt_tokens: int | None) -> None:
        """Learn the bytes per token from the endpoint's count of the latest request."""
        if prompt_tokens and self.budget is not None:
            self.budget.learn(self.sent_bytes, prompt_tokens)

    def view(self, result: ToolResult, tool: str = "") -> ToolResult:
        """A result as the model reads it: capped, and never taking more than the window leaves.

        A result that was cut says so, and how to read the rest, in the words of its tool.
        """
        limit = self.calling.retention.max_output_bytes
        if self.budget is not None:
            # One result may not take the whole window: the conversation must fit beside it,
            # and in a small window the next request must still fit with this result whole.
            limit = min(limit, self.budget.output_bytes(), self._room_for_result())
        fitted = fit_result(result, limit)
        self.viewed += len(result_json(fitted).encode("utf-8"))
        found = self.registry.get(tool) if tool else None
        if fitted is not result and found is not None and found.when_cut:
            fitted.notes = [*fitted.notes, found.when_cut]
        return fitted

    def _room_for_result(self) -> int:
        """Bytes the next result may take so that the request after it fits the window.

        Only this turn counts: earlier turns give way to a summary. Of it, what cannot be
        elided counts whole (the person's words, the model's answers, this step's results);
        older outputs count as the stubs that would replace them.
        """
        assert self.budget is not None
        budget = self.budget
        system = {"role": "system", "content": self.system(self.mode)}
        used = self._fixed_tokens(system, self.mode) + budget.message_tokens(self.viewed)
        for entry in self.conversation.current():
            size = len(entry.stub().encode("utf-8")) if entry.elidable else entry.size
            used += budget.message_tokens(size)
        # A floor: a result is never cut to nothing (the run then ends saying it cannot fit).
        return max(256, int((budget.limit - used - MESSAGE_OVERHEAD) * budget.bytes_per_token))

    def context(self) -> dict[str, int] | None:
        """The context the run leaves: `used` of a window of `size` tokens (None: no budget).

        `used` is the endpoint's own count of the last request and its answer where it gave
        one, else the estimate of the conversation.
        """
        if self.budget is None:
            return None
        used = self.meter.context_tokens or sum(
            self.budget.message_tokens(e.size) for e in self.conversation.entries
        )
        return {"used": used, "size": self.budget.window}

    def room_for_turn(self, mode: str) -> int | None:
        """Bytes a new turn's message may take beside the system prompt and the tools."""
        if self.budget is None:
            return None
        fixed = self._fixed_tokens({"role": "system", "content": self.system(mode)}, mode)
        free = self.budget.limit - fixed - MESSAGE_OVERHEAD
        return max(0, int(free * self.budget.bytes_per_token))

    def _fixed_tokens(self, system: dict[str, Any], mode: str) -> int:
        """Tokens every request of the run carries: the system prompt, the tools, the summary."""
        assert self.budget is not None
        tools = self.tool_list() if mode in (AUTO, NATIVE) else []
        tools_tokens = self.budget.tokens(len(json.dumps(tools))) if tools else 0
        note = len(self.conversation.summary_note().encode("utf-8"))
        note_tokens = self.budget.tokens(note) if note else 0
        return tools_tokens + self.budget.message_tokens(message_bytes(system)) + note_tokens

    def _record_fit(
        self, step: dict[str, Any], tokens: int, elided: list[str], summarised: int | None
    ) -> None:
        if not elided and summarised is None:
            return
        record: dict[str, Any] = {"estimated_tokens": tokens, "elided": elided}
        if summarised is not None:
            record["summarised_through_turn"] = summarised
        step["context"] = self.redact.deep(record)
        self.bus.emit(CONTEXT_FITTED, self.run_id, **record)

    async def _summarise(self, earlier: list[Any], step: dict[str, Any]) -> int:
        """Replace the earlier turns by a note written by one model call."""
        assert self.budget is not None
        if self.meter.calls + 2 > self.limits.max_llm_calls:
            # The summary and the turn it makes room for are two requests: without both the
            # session is left as it was rather than rewritten for a turn never asked.
            raise Stop(
                LIMIT,
                f"reached max_llm_calls ({self.limits.max_llm_calls}): the earlier turns need "
                "a summary first, one more model request than the limit leaves",
            )
        if self.before_compact is not None:
            await self.before_compact()  # the project's PreCompact hooks: they only look
        messages = summary_request(
            self.budget, self.conversation.summary, earlier, self.budget.limit
        )
        n = self.meter.count("summary")
        text = refusal = ""
        try:
            async for delta in self.model.stream(messages, None):
                text += delta.text
                refusal += delta.refusal
                self.meter.used(delta, n, step)
        except ModelError as exc:
            # The session stays as it was: nothing is written until the summary exists.
            raise Stop(
                FAILED, f"summarising the earlier turns failed: {self.redact.text(str(exc))}"
            ) from None
        if refusal.strip():
            raise Stop(
                INCOMPLETE,
                "summarising the earlier turns failed: the model refused: "
                + self.redact.text(refusal.strip()),
            )
        text = text.strip()
        if not text:
            raise Stop(FAILED, "summarising the earlier turns failed: the model answered nothing")
        return self.conversation.replace_with_summary(text)


def _for_mode(mode: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Earlier turns made with native calls, written as text for a text-mode request."""
    if mode != TEXT or not any(m.get("role") == "tool" for m in messages):
        return messages
    return as_text(messages)


def as_text(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Native tool calls and results as the text protocol writes them (`<tool>`, `<tool_result>`).

    An endpoint that takes no `tools` refuses `role: "tool"` messages too; a session that
    began with native calls goes on in text mode with its history in the same words.
    """
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    results: list[str] = []
    for message in messages:
        if message.get("role") == "tool":
            name = names.get(str(message.get("tool_call_id")), "tool")
            content = str(message.get("content") or "")
            try:
                block = format_tool_result(name, json.loads(content))
            except (ValueError, AttributeError):
                block = content  # an elided output's stub says what it was
            results.append(block)
            continue
        if results:
            out.append({"role": "user", "content": "\n\n".join(results)})
            results = []
        calls = message.get("tool_calls") or []
        if message.get("role") == "assistant" and calls:
            blocks = []
            for call in calls:
                function = call.get("function", {})
                names[str(call.get("id"))] = str(function.get("name", ""))
                blocks.append(
                    f'<tool name="{function.get("name", "")}" args>'
                    f"{function.get('arguments') or '{}'}</tool>"
                )
            text = str(message.get("content") or "")
            out.append({"role": "assistant", "content": "\n".join([text, *blocks]).strip()})
            continue
        out.append(message)
    if results:
        out.append({"role": "user", "content": "\n\n".join(results)})
    return out
