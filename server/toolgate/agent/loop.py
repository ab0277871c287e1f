"""The agent loop: ask the model, pass each call through the gate, feed results back, repeat."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from toolgate.agent.account import build_account, last_test_run_not_run
from toolgate.agent.events import (
    ASSISTANT_REASONING,
    ASSISTANT_TEXT,
    CONTEXT_FITTED,
    LATENT_REQUEST,
    LLM_CALL,
    LLM_USAGE,
    MODE_CHANGED,
    NOTICE,
    RUN_FINISHED,
    RUN_STARTED,
    TOOL_CALL_PARSE_ERROR,
    EventBus,
)
from toolgate.agent.gate import Gate, GateOutcome
from toolgate.agent.metrics import Metrics
from toolgate.agent.policy import Decision, Policy
from toolgate.agent.redact import Redactor
from toolgate.agent.repeats import REPEATED, RepeatGuard
from toolgate.agent.retention import fit_result, result_json
from toolgate.agent.runlog import RunLog
from toolgate.agent.text_in_native import CallsInText, never_ran
from toolgate.agent.undo_news import undo_news
from toolgate.calls import CallParseError, ParsedCall, StreamingCallParser
from toolgate.calls.prompt import (
    compact_instructions,
    corrective_message,
    format_tool_result,
    text_mode_instructions,
)
from toolgate.calls.reading import parser_for
from toolgate.config import Limits, ToolCalling
from toolgate.conversation.budget import (
    MESSAGE_OVERHEAD,
    Budget,
    fit,
    message_bytes,
    summary_request,
)
from toolgate.conversation.history import Conversation
from toolgate.model.client import (
    ChatModel,
    ModelError,
    OpenAIChatModel,
    StreamDelta,
    ToolsRejected,
)
from toolgate.model.meter import RequestRefused
from toolgate.model.modes import AUTO, NATIVE, TEXT, ModeMemory
from toolgate.model.tool_deltas import NativeCall
from toolgate.records import ToolCall, ToolResult, new_id
from toolgate.review.reviewer import Reviewer
from toolgate.tools.activity import ActivityContext
from toolgate.tools.capabilities import operations_done
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import CHANGE, OTHER, READ, Tool

log = logging.getLogger(__name__)

COMPLETED = "completed"
FAILED = "failed"
BLOCKED = "blocked_by_policy"
LIMIT = "limit_reached"
CANCELLED = "cancelled"
INCOMPLETE = "incomplete"
# How often streamed prose is passed on in text mode: a screen needs no more, and the parser
# works prose out when it is asked for (calls are passed on the moment they close).
CONTENT_INTERVAL = 0.05

FINAL_ANSWER = Tool(
    name="final_answer",
    description="Finish the task: give your final answer to the person. Call it once, last.",
    parameters={
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    },
)

_call_ids = itertools.count(1)

FENCED_HINT = (
    "Your tool block was inside a ``` code fence, which marks an example, so it did not run. "
    "To call a tool, write the tool block on its own, without the fence."
)
INVENTED_RESULT_HINT = (
    "You wrote a <tool_result> block yourself, so no tool ran. Results come only from Toolgate: "
    'call the tool with a <tool name="NAME" args>{…}</tool> block and wait for its result.'
)
DONE_HINT = (
    "Go on with the next step of the task. Only when every step is done, reply with one plain "
    "sentence and no tool block."
)


# One record of limits for the configuration and the loop: nothing is copied field by field.
RunLimits = Limits


@dataclass
class RunOutcome:
    """How a run ended."""

    run_id: str
    status: str
    reason: str | None = None
    answer: str | None = None
    log_path: str | None = None
    # Why the model's last answer ended (`stop`, `length`, `content_filter`…), as it said.
    finish_reason: str | None = None
    # The model's refusal, when its last answer was one (OpenAI's `refusal` field).
    refusal: str | None = None


class _Stop(Exception):
    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class _Turn:
    text: str = ""
    native: list[NativeCall] = field(default_factory=list)
    finish_reason: str | None = None
    refusal: str = ""  # what the model streamed as its refusal, apart from the text
    errors: list[CallParseError] = field(default_factory=list)
    outcomes: list[tuple[ToolCall, GateOutcome]] = field(default_factory=list)
    views: list[ToolResult] = field(default_factory=list)  # each result as the model reads it


def _refused(turn: _Turn) -> str | None:
    """Why a turn that ended the run is a refusal (None when it is not one).

    The model's own refusal (OpenAI streams it in `refusal`, often with finish reason `stop`)
    and an answer the endpoint's content filter stopped end the run the same way.
    """
    if turn.refusal:
        first = turn.refusal.strip().splitlines()[0] if turn.refusal.strip() else ""
        said = first[:200] + ("…" if len(first) > 200 else "")
        return f"the model refused: {said}" if said else "the model refused"
    if turn.finish_reason == "content_filter":
        return "the endpoint's content filter stopped the answer"
    return None


class AgentRun:
    """One task, from the person's words to a final status."""

    def __init__(
        self,
        *,
        task: str,
        model: ChatModel,
        registry: ToolRegistry,
        policy: Policy,
        reviewer: Reviewer,
        ctx: ActivityContext,
        system_prompt: str,
        tool_calling: ToolCalling | None = None,
        limits: RunLimits | None = None,
        bus: EventBus | None = None,
        run_id: str | None = None,
        redactor: Redactor | None = None,
        profile: str = "developer",
        mode_memory: ModeMemory | None = None,
        cleanups: Sequence[Callable[[], Awaitable[None]]] = (),
        conversation: Conversation | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.run_id = run_id or new_id("run")
        ctx.run_id = self.run_id
        self.task = task
        self.model = model
        self.registry = registry
        self.reviewer = reviewer
        self.ctx = ctx
        self.calling = tool_calling or ToolCalling()
        self.limits = limits or RunLimits()
        self.bus = bus or EventBus()
        self.redact = redactor or Redactor()
        self.bus.redactor.extend(self.redact)
        self.metrics = Metrics()
        self.memory = mode_memory or ModeMemory(ctx.workspace.root)
        self._learn_tool_streaming()
        self.mode = self._initial_mode()
        self.base_prompt = system_prompt
        self.gate = Gate(
            registry=registry,
            policy=policy,
            reviewer=reviewer,
            ctx=ctx,
            bus=self.bus,
            redactor=self.redact,
            max_argument_depth=self.calling.max_argument_depth,
            meter=self,
        )
        self.runlog = RunLog(
            ctx.workspace.root,
            self.run_id,
            task,
            model.model,
            model.base_url,
            self.mode if self.mode != AUTO else NATIVE,
            self.redact,
            profile,
        )
        # The conversation this run continues (a fresh one in memory when none is given), and
        # the window every request must fit in (None: no limit, for callers that manage it).
        self.conversation = conversation or Conversation()
        self.conversation.redact = self.redact.deep
        self.budget = budget
        if self.conversation.session_id:
            self.runlog.set(session_id=self.conversation.session_id)
        self._step: dict[str, Any] | None = None
        self.bus.subscribe(self.metrics)
        self.bus.subscribe(self.runlog.on_event)
        self._task: asyncio.Task[RunOutcome] | None = None
        self._began = False
        self._cancel_reason: str | None = None
        self.finish_reason: str | None = None  # of the model's latest answer
        self.refusal: str | None = None  # the model's latest answer, when it was a refusal
        self.llm_calls = 0
        self.answer: str | None = None
        # What the project's hooks add to the person's words for the model (SessionStart,
        # UserPromptSubmit), and whether they let the run end here (Stop): set by the session.
        self.turn_context = ""
        self.stop_check: Callable[[str | None, bool], Awaitable[str | None]] | None = None
        self.before_compact: Callable[[], Awaitable[None]] | None = None
        self._stops_refused = 0
        self._repeats = RepeatGuard(registry, ctx)
        self._calls_in_text = CallsInText(self._parser, self.limits.max_tool_retries)
        self._turn_calls = 0
        self._content_at = 0.0
        self._sent_bytes = 0
        self._context_tokens = 0  # the endpoint's count of the latest request it counted
        # What the run holds open for its tools (MCP sessions): released when it ends.
        self._cleanups = list(cleanups)

    def _learn_tool_streaming(self) -> None:
        """Let the client skip streaming where the endpoint was found to need it, and learn it."""
        model = self.model
        if not isinstance(model, OpenAIChatModel):
            return  # the embedded model and tests' fakes stream no tools over HTTP
        base_url, name = model.base_url, model.model
        model.stream_tools = self.memory.streams_tools(base_url, name)
        model.on_no_tool_streaming = lambda why: self.memory.remember_no_tool_streaming(
            base_url, name, why
        )

    def _initial_mode(self) -> str:
        if not self.calling.enabled:
            return "off"
        if self.calling.mode != AUTO:
            return self.calling.mode  # an explicit mode is never overridden
        remembered = self.memory.get(self.model.base_url, self.model.model)
        return remembered or AUTO

    def cancel(self, reason: str = "cancelled by the person") -> None:
        """Stop the run as soon as possible; pending proposals are resolved as cancelled."""
        self._cancel_reason = reason
        if self._task is not None:
            self._task.cancel()

    async def run(self) -> RunOutcome:
        """Run to the end; never raises for the run's own failures."""
        self._task = asyncio.current_task()
        started = time.monotonic()
        self.bus.emit(
            RUN_STARTED,
            self.run_id,
            task=self.task,
            model=self.model.model,
            base_url=self.model.base_url,
            tool_calling_mode=self.runlog_mode,
            session_id=self.conversation.session_id,
        )
        self.runlog.save()
        status, reason = COMPLETED, None
        try:
            try:
                await asyncio.wait_for(self._loop(started), timeout=self.limits.max_run_seconds)
            except asyncio.TimeoutError:
                raise _Stop(
                    LIMIT, f"the run took longer than {self.limits.max_run_seconds:.0f}s"
                ) from None
            status, reason = self._judge()
        except _Stop as stop:
            status, reason = stop.status, stop.reason
        except ModelError as exc:
            status, reason = FAILED, self.redact.text(str(exc))
        except asyncio.CancelledError:
            status, reason = CANCELLED, self._cancel_reason or "cancelled"
            if self._cancel_reason is None:
                raise
        except Exception as exc:  # a crash ends this run, never the host
            log.exception("run %s crashed", self.run_id)
            status, reason = (
                FAILED,
                self.redact.text(f"internal error: {type(exc).__name__}: {exc}"),
            )
        finally:
            if self._began:
                self.conversation.end_turn(
                    self.run_id, status, reason, self.answer, self._context()
                )
            self.runlog.set(answer=self.answer, tool_calling_mode=self.runlog_mode)
            done = operations_done(self.runlog.doc["steps"], self.registry)
            account = build_account(
                self.runlog.doc["events"],
                self.runlog.doc["steps"],
                time.monotonic() - started,
                str(self.runlog.path),
                self.registry,
            )
            account["done"] = done
            self.runlog.set(account=account)
            self.bus.emit(
                RUN_FINISHED,
                self.run_id,
                status=status,
                reason=reason,
                answer=self.answer,
                done=done,
                account=account,
            )
            self.runlog.finish(status, reason, self.metrics.snapshot())
            await self.release()
        return RunOutcome(
            self.run_id,
            status,
            reason,
            self.answer,
            str(self.runlog.path),
            self.finish_reason,
            self.refusal,
        )

    def _judge(self) -> tuple[str, str | None]:
        """How a run the model ended went: `completed` only when it did what it says it did.

        An empty answer with no call at all is what a non-API page answering 200 gives; a run
        whose last change or asked-for command was refused, or whose last change failed, ends
        with words that may claim what never landed.
        """
        calls = [c for step in self.runlog.doc["steps"] for c in step["calls"]]
        if not calls and not (self.answer or "").strip():
            return FAILED, (
                "the model sent an empty answer and no tool call; check that the base URL is an "
                "OpenAI-compatible API (it should end in /v1)"
            )
        unran = never_ran(calls)  # the last call was written as text (agent/text_in_native.py)
        if unran:
            return INCOMPLETE, unran
        acts = [
            c for c in calls if c.get("decision") in ("approved", "rejected") or self._changes(c)
        ]
        if acts and acts[-1]["decision"] == "rejected":
            refused = sum(1 for c in acts if c["decision"] == "rejected")
            return INCOMPLETE, (
                f"{refused} gated call(s) the model made were refused and nothing landed after "
                "the last of them; its answer may say otherwise"
            )
        if acts and not (acts[-1].get("result") or {}).get("success"):
            # Failed before anybody saw it (no match, bad arguments, a policy's deny) or when
            # applied: a script reading exit 0 would trust a change that is not there.
            last = acts[-1]
            error = (last.get("result") or {}).get("error") or "it failed"
            return INCOMPLETE, (
                f"the last change the model asked for did not land ({last.get('name')}: "
                f"{error}); its answer may say otherwise"
            )
        untested = last_test_run_not_run(self.runlog.doc["events"])
        if untested:
            # "Tests are green" after tests that never ran: not a finished task either.
            return INCOMPLETE, (
                f"the last test run did not run ({untested}); its answer may say otherwise"
            )
        return COMPLETED, None

    def _changes(self, logged: Mapping[str, Any]) -> bool:
        """Whether a logged call is to a tool that changes the workspace."""
        tool = self.registry.get(str(logged.get("name") or ""))
        return tool is not None and tool.kind == CHANGE

    async def release(self) -> None:
        """Close what the run holds open for its tools (its MCP sessions).

        Done when the run ends; safe to call again, or for a run that never started.
        """
        cleanups, self._cleanups = self._cleanups, []
        for cleanup in cleanups:
            try:
                await cleanup()
            except Exception:  # a server that will not stop must not change the outcome
                log.warning("run %s: releasing a tool session failed", self.run_id, exc_info=True)

    @property
    def runlog_mode(self) -> str:
        """The mode as the run log records it."""
        return {AUTO: NATIVE, "off": "off"}.get(self.mode, self.mode)

    def room_for_turn(self) -> int | None:
        """Bytes a new turn's message may take beside the system prompt and the tools.

        None without a budget. Earlier turns are not counted: they can be elided or summarised.
        """
        if self.budget is None:
            return None
        fixed = self._fixed_tokens({"role": "system", "content": self._system()})
        free = self.budget.limit - fixed - MESSAGE_OVERHEAD
        return max(0, int(free * self.budget.bytes_per_token))

    def _system(self) -> str:
        base = self.base_prompt + self.conversation.summary_note()
        if self.mode == TEXT and self.calling.compact_prompt:
            return base + "\n" + compact_instructions(self._tool_list(text=True))
        if self.mode == TEXT:
            tools = self._tool_list(text=True)
            syntax = self.calling.text_syntax
            return base + "\n" + text_mode_instructions(tools, syntax)
        return base

    def _tool_list(self, *, text: bool = False) -> list[dict[str, Any]]:
        tools = self.registry.openai_tools()
        if self.calling.final_answer_tool and not text:
            tools.append(FINAL_ANSWER.openai())
        return tools

    async def _goes_on(self) -> bool:
        """Whether a Stop hook sends the model back to work, its reason as the next message."""
        if self.stop_check is None or self._stops_refused >= self.limits.max_tool_retries:
            return False
        reason = await self.stop_check(self.answer, self._stops_refused > 0)
        if not reason:
            return False
        self._stops_refused += 1
        self._add({"role": "user", "content": f"Not done yet: {reason}"})
        return True

    def _add(self, message: dict[str, Any], tools: tuple[str, ...] = ()) -> None:
        self.conversation.add(message, tools)

    async def _loop(self, started: float) -> None:
        conversation = self.conversation
        news = undo_news(self.ctx.workspace.root, conversation.runs, conversation.undone_told)
        note = "\n\n".join(part for part in (news.note, self.turn_context) if part)
        conversation.begin_turn(self.run_id, self.task, note=note, undone=news.undone)
        if news.notice:
            self.bus.emit(NOTICE, self.run_id, message=news.notice)  # nothing said unseen
        self._began = True
        retries = 0
        denied_streak = 0
        hints = 0
        corrected = False
        for step_number in itertools.count(1):
            if step_number > self.limits.max_steps:
                raise _Stop(LIMIT, f"reached max_steps ({self.limits.max_steps})")
            step = self.runlog.begin_step(step_number)
            self._step = step
            log.debug(
                "run %s step %d: asking %s at %s (%s mode)",
                self.run_id,
                step_number,
                self.model.model,
                self.model.base_url,
                self.runlog_mode,
            )
            # The mode the step was asked in: an answer read in another mode switches it.
            asked_in = self.runlog_mode
            turn = await self._turn()
            self.finish_reason = turn.finish_reason
            self.refusal = turn.refusal or None
            if turn.refusal:
                # The refusal is the answer the person read: the conversation keeps it as one.
                turn.text += turn.refusal
                step["refusal"] = self.redact.text(turn.refusal)
            step["assistant_text"] = self.redact.text(turn.text)
            step["tool_calling_mode"] = asked_in
            final = next((c for c, _ in turn.outcomes if c.name == FINAL_ANSWER.name), None)
            if final is not None:
                # The conversation keeps the answer as plain words: a call to final_answer
                # with no result after it would be refused by the endpoint next turn.
                answer = str(final.arguments.get("answer", "")) or turn.text
                self._add({"role": "assistant", "content": answer})
            elif self.mode == TEXT:
                self._add({"role": "assistant", "content": turn.text})
            else:
                self._add(self._assistant_message(turn))
            # What the model reads of each result, capped once for the log and the reply.
            turn.views = [self._model_view(o.result) for _, o in turn.outcomes]
            for (call, outcome), view in zip(turn.outcomes, turn.views, strict=True):
                entry = self._log_entry(call, outcome, view)
                self.runlog.record_call(step, entry)
                if call.name != FINAL_ANSWER.name:
                    record = _call_record(entry, view, self.registry.get(call.name))
                    self.conversation.record_call(self.run_id, record)
            for error in turn.errors:
                self.runlog.record_call(
                    step,
                    {
                        "id": None,
                        "name": None,
                        "decision": "denied",
                        "error": error.error,
                        "raw_excerpt": error.raw_excerpt,
                    },
                )
            self.runlog.save()
            if final is not None:
                self.answer = str(final.arguments.get("answer", "")) or turn.text
                if await self._goes_on():
                    continue
                return
            if not turn.outcomes and not turn.errors:
                refused = _refused(turn)
                if refused:
                    self.answer = turn.text
                    raise _Stop(INCOMPLETE, self.redact.text(refused))
                hint = self._text_hint(turn.text) if self.mode == TEXT else None
                if hint and hints < self.limits.max_tool_retries:
                    hints += 1
                    self._add({"role": "user", "content": hint})
                    continue
                # A call written as text, with no call made, is a failed call and never the
                # answer (agent/text_in_native.py): told, then text mode, then the end.
                unmade = (
                    None if hint else self._calls_in_text.judge(turn.text, self.mode, step_number)
                )
                if unmade is not None:
                    self._parse_error(unmade.error.error, unmade.error.raw_excerpt)
                    self.runlog.record_call(step, unmade.log_entry())
                    self.runlog.save()
                    if unmade.switch:
                        self._switch(TEXT, unmade.switch)
                    if unmade.stop:
                        raise _Stop(FAILED, self.redact.text(unmade.stop))
                    self._add({"role": "user", "content": unmade.message})
                    continue
                self.answer = turn.text
                if hint is INVENTED_RESULT_HINT:
                    # An answer that reports results no tool produced is not a finished task:
                    # a person reading only "completed" would be misled.
                    raise _Stop(
                        FAILED,
                        "the model kept writing tool results itself instead of calling tools; "
                        "nothing it reported was run",
                    )
                if await self._goes_on():
                    continue
                return
            self._feed_back(turn, corrected)
            if turn.errors and self.mode == TEXT:
                corrected = True
            if turn.outcomes and all(
                o.decision == "denied" and o.result.error and "policy" in o.result.error
                for _, o in turn.outcomes
            ):
                denied_streak += 1
            else:
                denied_streak = 0
            failed = (not turn.outcomes and turn.errors) or (
                turn.outcomes and all(not o.result.success for _, o in turn.outcomes)
            )
            retries = retries + 1 if failed else 0
            if denied_streak > self.limits.max_tool_retries:
                raise _Stop(BLOCKED, "the model kept asking for calls the policy denies")
            if retries > self.limits.max_tool_retries:
                raise _Stop(
                    FAILED,
                    f"{retries} turns in a row had only failed or invalid calls "
                    f"(max_tool_retries = {self.limits.max_tool_retries})",
                )

    def _feed_back(self, turn: _Turn, corrected: bool) -> None:
        if self.mode == TEXT:
            blocks = [
                format_tool_result(call.name, view.to_dict())
                for (call, _), view in zip(turn.outcomes, turn.views, strict=True)
            ]
            if turn.errors:
                blocks.append(corrective_message(turn.errors))
            else:
                blocks.append(DONE_HINT)
            names = tuple(call.name for call, _ in turn.outcomes)
            self._add({"role": "user", "content": "\n\n".join(blocks)}, names)
            return
        self.conversation.add_many(
            [
                (
                    {"role": "tool", "tool_call_id": call.id, "content": result_json(view)},
                    (call.name,),
                )
                for (call, _), view in zip(turn.outcomes, turn.views, strict=True)
            ]
        )

    def _model_view(self, result: ToolResult) -> ToolResult:
        limit = self.calling.max_output_bytes
        if self.budget is not None:
            # One result may not take the whole window: the conversation must fit beside it.
            limit = min(limit, self.budget.output_bytes())
        return fit_result(result, limit)

    async def _request(self) -> list[dict[str, Any]]:
        """The messages of the next request, kept inside the budget."""
        system = {"role": "system", "content": self._system()}
        earlier, current = self.conversation.earlier(), self.conversation.current()
        if self.budget is None:
            messages = [e.message for e in [*earlier, *current]]
            return [system, *self._for_mode(messages)]
        fixed = self._fixed_tokens(system)
        fitted = fit(self.budget, fixed, earlier, current)
        summarised = None
        if not fitted.fits and earlier:
            summarised = await self._summarise(earlier)
            system = {"role": "system", "content": self._system()}
            fixed = self._fixed_tokens(system)
            fitted = fit(self.budget, fixed, [], self.conversation.current())
        self._record_fit(fitted.tokens, fitted.elided, summarised)
        if not fitted.fits and not self.budget.known:
            self.bus.emit(
                NOTICE,
                self.run_id,
                message=f"this request needs about {fitted.tokens} tokens, more than the "
                f"{self.budget.limit} a {self.budget.window}-token window leaves; the endpoint "
                "did not say its window, so it is sent anyway (set model.context_tokens)",
            )
        elif not fitted.fits:
            raise _Stop(
                FAILED,
                f"this turn alone needs about {fitted.tokens} tokens, more than the "
                f"{self.budget.limit} the model's window of {self.budget.window} leaves for a "
                "request; start a new session or raise model.context_tokens",
            )
        self._sent_bytes = int(fixed * self.budget.bytes_per_token) + sum(
            message_bytes(m) for m in fitted.messages
        )
        return [system, *self._for_mode(fitted.messages)]

    def _for_mode(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Earlier turns made with native calls, written as text for a text-mode request."""
        if self.mode != TEXT or not any(m.get("role") == "tool" for m in messages):
            return messages
        return as_text(messages)

    def _fixed_tokens(self, system: dict[str, Any]) -> int:
        assert self.budget is not None
        tools = self._tool_list() if self.mode in (AUTO, NATIVE) else []
        tools_tokens = self.budget.tokens(len(json.dumps(tools))) if tools else 0
        return tools_tokens + self.budget.message_tokens(message_bytes(system))

    def _record_fit(self, tokens: int, elided: list[str], summarised: int | None) -> None:
        if not elided and summarised is None:
            return
        record: dict[str, Any] = {"estimated_tokens": tokens, "elided": elided}
        if summarised is not None:
            record["summarised_through_turn"] = summarised
        if self._step is not None:
            self._step["context"] = self.redact.deep(record)
        self.bus.emit(CONTEXT_FITTED, self.run_id, **record)

    async def _summarise(self, earlier: list[Any]) -> int:
        """Replace the earlier turns by a note written by one model call."""
        assert self.budget is not None
        if self.llm_calls + 2 > self.limits.max_llm_calls:
            # The summary and the turn it makes room for are two requests: without both the
            # session is left as it was rather than rewritten for a turn never asked.
            raise _Stop(
                LIMIT,
                f"reached max_llm_calls ({self.limits.max_llm_calls}): the earlier turns need "
                "a summary first, one more model request than the limit leaves",
            )
        if self.before_compact is not None:
            await self.before_compact()  # the project's PreCompact hooks: they only look
        messages = summary_request(
            self.budget, self.conversation.summary, earlier, self.budget.limit
        )
        n = self._count_request("summary")
        text = refusal = ""
        try:
            async for delta in self.model.stream(messages, None):
                text += delta.text
                refusal += delta.refusal
                self._used(delta, n)
        except ModelError as exc:
            # The session stays as it was: nothing is written until the summary exists.
            raise _Stop(
                FAILED, f"summarising the earlier turns failed: {self.redact.text(str(exc))}"
            ) from None
        if refusal.strip():
            raise _Stop(
                INCOMPLETE,
                "summarising the earlier turns failed: the model refused: "
                + self.redact.text(refusal.strip()),
            )
        text = text.strip()
        if not text:
            raise _Stop(FAILED, "summarising the earlier turns failed: the model answered nothing")
        return self.conversation.replace_with_summary(text)

    def _count_request(self, mode: str) -> int:
        """Count one model request of this run (`llm_call`), and return its number."""
        self.llm_calls += 1
        self.bus.emit(LLM_CALL, self.run_id, mode=mode, n=self.llm_calls)
        return self.llm_calls

    def _used(self, delta: StreamDelta, n: int, *, mode: str | None = None) -> None:
        """Log the tokens the endpoint said request `n` used (the account adds them up)."""
        if not (delta.done and delta.usage):
            return
        if mode is not None:
            # A nested request: its tokens count for the run, not for the step's own request.
            self.bus.emit(LLM_USAGE, self.run_id, n=n, mode=mode, **delta.usage)
            return
        self.bus.emit(LLM_USAGE, self.run_id, n=n, **delta.usage)
        if self._step is not None:
            self._step["usage"] = dict(delta.usage)
        usage = delta.usage
        total = usage.get("total_tokens") or (
            usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        )
        self._context_tokens = total or self._context_tokens

    def _context(self) -> dict[str, int] | None:
        """The context the run leaves: `used` of a window of `size` tokens (None: no budget).

        `used` is the endpoint's own count of the last request and its answer where it gave
        one, else the estimate of the conversation.
        """
        if self.budget is None:
            return None
        used = self._context_tokens or sum(
            self.budget.message_tokens(e.size) for e in self.conversation.entries
        )
        return {"used": used, "size": self.budget.window}

    def start_request(self) -> int:
        """Count a latent answer's model request toward `limits.max_llm_calls`.

        Returns its number in the run; raises RequestRefused, and counts nothing, when the
        run has made all the requests the limit allows.
        """
        if self.llm_calls >= self.limits.max_llm_calls:
            raise RequestRefused(
                f"the run has made all {self.limits.max_llm_calls} model requests "
                "limits.max_llm_calls allows"
            )
        return self._count_request(LATENT_REQUEST)

    def finish_request(self, n: int, delta: StreamDelta) -> None:
        """Record the tokens latent request `n` used, as the run's own requests are."""
        self._used(delta, n, mode=LATENT_REQUEST)

    def _log_entry(self, call: ToolCall, outcome: GateOutcome, view: ToolResult) -> dict[str, Any]:
        stored = outcome.result if self.calling.store_raw_tool_output else view
        return {
            "id": call.id,
            "name": call.name,
            "arguments": outcome.arguments,
            "reasoning": outcome.reasoning,
            "syntax": call.syntax,
            "decision": outcome.decision,
            "proposal_id": outcome.proposal_id,
            "result": stored.to_dict(),
        }

    def _assistant_message(self, turn: _Turn) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
        if turn.native:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments or "{}"},
                }
                for c in turn.native
            ]
        return message

    async def _turn(self) -> _Turn:
        """One model turn; each call goes through the gate as soon as it is known."""
        if self.llm_calls >= self.limits.max_llm_calls:
            raise _Stop(LIMIT, f"reached max_llm_calls ({self.limits.max_llm_calls})")
        turn = _Turn()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        producer = asyncio.create_task(self._produce(turn, queue))
        # Reads run side by side while the model writes; anything else waits for them and runs
        # alone, so a change never races a read and the results keep the model's order.
        slots: list[tuple[ToolCall, asyncio.Future[GateOutcome]]] = []
        reading: list[asyncio.Future[GateOutcome]] = []
        try:
            while True:
                kind, item = await queue.get()
                if kind == "call":
                    task: asyncio.Future[GateOutcome]
                    if self._runs_beside(item):
                        task = asyncio.ensure_future(self._gate(item))
                        reading.append(task)
                    else:
                        await asyncio.gather(*reading)
                        reading = []
                        task = asyncio.get_running_loop().create_future()
                        task.set_result(await self._gate(item))
                    slots.append((item, task))
                elif kind == "error":
                    turn.errors.append(item)
                    self._parse_error(item.error, item.raw_excerpt)
                elif kind == "raise":
                    raise item
                elif kind == "done":
                    break
            await asyncio.gather(*reading)
        finally:
            for pending in reading:
                pending.cancel()
            await asyncio.gather(*reading, return_exceptions=True)
            if not producer.done():
                producer.cancel()
                await asyncio.gather(producer, return_exceptions=True)
        turn.outcomes = [(call, task.result()) for call, task in slots]
        return turn

    def _runs_beside(self, call: ToolCall) -> bool:
        """Whether a call may run beside the turn's other reads: it reads, and nobody is asked."""
        tool = self.registry.get(call.name)
        if tool is None or "__invalid_json__" in call.arguments:
            return False
        if tool.kind != READ:
            return False
        # A call the person is asked about waits its turn: questions come one at a time.
        return self.gate.policy.decide(tool) == Decision.AUTO

    async def _produce(self, turn: _Turn, queue: asyncio.Queue[tuple[str, Any]]) -> None:
        try:
            await self._produce_inner(turn, queue)
        except Exception as exc:
            queue.put_nowait(("raise", exc))
        else:
            queue.put_nowait(("done", None))

    async def _produce_inner(self, turn: _Turn, queue: asyncio.Queue[tuple[str, Any]]) -> None:
        tools = self._tool_list() if self.mode in (AUTO, NATIVE) else None
        full = await self._request()
        n = self._count_request(self.runlog_mode)
        parser = self._parser() if self.mode == TEXT else None
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
                    if delta.prompt_tokens and self.budget is not None:
                        self.budget.learn(self._sent_bytes, delta.prompt_tokens)
                    self._used(delta, n)
        except ToolsRejected as exc:
            if self.mode != AUTO:
                raise
            self._switch(TEXT, f"the endpoint rejected the tools parameter: {exc}")
            turn.text, turn.refusal = "", ""
            await self._produce_inner(turn, queue)
            return
        if parser is not None:
            self._text_items(parser, parser.finish(), queue, final=True)
            if self.calling.compact_prompt and not self._turn_calls:
                # The small embedded model puts every call in a code fence, which would mark
                # an example; it was told to write tool blocks, so its fenced calls are run
                # (through the gate like any other).
                for call in self._fenced(turn.text):
                    queue.put_nowait(self._text_item(call))
            return
        if turn.native:
            for native in turn.native:
                queue.put_nowait(self._native_item(native))
            return
        if self.mode == AUTO and turn.text:
            # Servers that ignore `tools` answer 200 with the call written as text.
            found = self._parser()
            items = found.feed(turn.text) + found.finish()
            if any(isinstance(i, ParsedCall) for i in items):
                self._switch(TEXT, "the model wrote its tool calls as text")
                for item in items:
                    queue.put_nowait(self._text_item(item))

    def _fenced(self, text: str) -> list[ParsedCall]:
        """The calls that only a code fence kept from running."""
        unfenced = "\n".join(
            line for line in text.splitlines() if not line.lstrip().startswith("```")
        )
        parser = self._parser()
        items = parser.feed(unfenced) + parser.finish()
        return [replace(i, syntax=f"fenced_{i.syntax}") for i in items if isinstance(i, ParsedCall)]

    def _text_hint(self, text: str) -> str | None:
        """A hint for a text-mode answer that looks like a call that did not happen."""
        if self._fenced(text):
            return FENCED_HINT  # small models wrap their call in a fence, which marks an example
        if "<tool_result" in text:
            return INVENTED_RESULT_HINT  # small models sometimes write the result themselves
        return None

    def _parser(self) -> StreamingCallParser:
        return parser_for(self.registry.argument_schemas(), self.calling)

    def _text_items(
        self,
        parser: StreamingCallParser,
        items: list[Any],
        queue: asyncio.Queue[tuple[str, Any]],
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

    def _text_item(self, item: ParsedCall | CallParseError) -> tuple[str, Any]:
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

    def _native_item(self, native: NativeCall) -> tuple[str, Any]:
        raw = native.arguments.strip() or "{}"
        try:
            arguments = json.loads(raw)
        except ValueError as exc:
            arguments = {"__invalid_json__": raw, "__error__": str(exc)}
        return (
            "call",
            ToolCall(id=native.id, name=native.name, arguments=arguments, raw_excerpt=raw[:500]),
        )

    def _switch(self, mode: str, reason: str) -> None:
        self.mode = mode
        self.memory.remember(self.model.base_url, self.model.model, mode, reason)
        self.runlog.set(tool_calling_mode=mode)
        self.bus.emit(MODE_CHANGED, self.run_id, mode=mode, reason=self.redact.text(reason))

    def _say(self, text: str) -> None:
        self.bus.emit(ASSISTANT_TEXT, self.run_id, text=self.redact.text(text))

    def _parse_error(self, error: str, raw: str) -> None:
        self.bus.emit(
            TOOL_CALL_PARSE_ERROR, self.run_id, raw_excerpt=self.redact.text(raw[:500]), error=error
        )

    async def _gate(self, call: ToolCall) -> GateOutcome:
        """Validate a call like any other and pass it through the gate."""
        if "__invalid_json__" in call.arguments:
            error = (
                f"arguments of {call.name} are not valid JSON "
                f"({call.arguments['__error__']}); send one JSON object"
            )
            self._parse_error(error, call.raw_excerpt)
            return self.gate.invalid(call, error)
        if call.name == FINAL_ANSWER.name and self.calling.final_answer_tool:
            return GateOutcome(ToolResult.ok({"done": True}), "auto", call.arguments)
        if call.name not in self.registry:
            error = f"unknown tool {call.name!r}; available: {', '.join(self.registry.names())}"
            self._parse_error(error, call.raw_excerpt or call.name)
            return self.gate.invalid(call, error)
        problem = self.registry.validate(call.name, call.arguments)
        if problem:
            self._parse_error(problem, call.raw_excerpt or json.dumps(call.arguments)[:500])
            return self.gate.invalid(call, problem)
        if await self._repeats.is_repeat(call):
            self._repeats.repeats += 1
            if self._repeats.repeats > self.limits.max_tool_retries:
                raise _Stop(LIMIT, "the model kept repeating calls it had already made")
            return self.gate.invalid(call, REPEATED)
        await self._repeats.before(call)
        outcome = await self.gate.handle(call)
        await self._repeats.after(call, outcome.result)
        return outcome


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


def _call_record(entry: dict[str, Any], view: ToolResult, tool: Tool | None) -> dict[str, Any]:
    """A call as the transcript keeps it: what was asked, what became of it, in one line."""
    decision = entry.get("decision")
    if decision in ("denied", "rejected"):
        status = decision
    else:
        status = "ok" if view.success else "failed"
    record = {
        "call_id": entry.get("id"),
        "name": entry.get("name"),
        "arguments": entry.get("arguments"),
        "status": status,
        "summary": _result_summary(view),
        "kind": tool.kind if tool is not None else OTHER,  # a client draws the call by it
    }
    if entry.get("proposal_id"):
        record["proposal_id"] = entry["proposal_id"]
    return record


def _result_summary(result: ToolResult) -> str:
    if result.error:
        return str(result.error).splitlines()[0][:200] if result.error else ""
    data = result.data
    if isinstance(data, dict):
        summary = data.get("summary")
        if isinstance(summary, dict):
            return ", ".join(f"{v} {k}" for k, v in summary.items() if v)[:200]
        if isinstance(summary, str):
            return summary[:200]
        for key in ("message", "status", "path"):
            if isinstance(data.get(key), str):
                return str(data[key])[:200]
    size = result.output_size_bytes or len(result_json(result))
    return f"{size} bytes"
