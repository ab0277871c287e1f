"""The agent loop: ask the model, pass each call through the gate, feed results back, repeat.

`AgentRun` composes the parts a run is made of: the requests and their context budget
(`request.py`), the meter of model requests (`meter.py`), the turn read off the stream
(`producer.py`) and the judgement of how the run ended (`outcome.py`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from toolgate.agent.account import build_account, rules_used
from toolgate.agent.call_log import call_record, log_entry
from toolgate.agent.events import NOTICE, RUN_FINISHED, RUN_STARTED, TOOL_CALL_PARSE_ERROR, EventBus
from toolgate.agent.gate import Gate, GateOutcome
from toolgate.agent.meter import RunMeter
from toolgate.agent.metrics import Metrics
from toolgate.agent.outcome import (
    BLOCKED,
    CANCELLED,
    COMPLETED,
    FAILED,
    INCOMPLETE,
    LIMIT,
    RunOutcome,
    Stop,
    Streaks,
    judge,
    refused,
)
from toolgate.agent.policy import Decision, Policy
from toolgate.agent.producer import (
    Item,
    Turn,
    TurnProducer,
    initial_mode,
    learn_tool_streaming,
    logged_mode,
)
from toolgate.agent.redact import Redactor
from toolgate.agent.repeats import REPEATED, RepeatGuard
from toolgate.agent.request import FINAL_ANSWER, RequestBuilder
from toolgate.agent.retention import result_json
from toolgate.agent.runlog import RunLog
from toolgate.agent.text_in_native import CallsInText
from toolgate.agent.undo_news import undo_news
from toolgate.calls.prompt import corrective_message, format_tool_result
from toolgate.config import Limits, ToolCalling
from toolgate.conversation.budget import Budget
from toolgate.conversation.history import Conversation
from toolgate.model.client import ChatModel, ModelError, StreamDelta
from toolgate.model.modes import AUTO, NATIVE, TEXT, ModeMemory
from toolgate.records import ToolCall, ToolResult, new_id
from toolgate.review.reviewer import Reviewer
from toolgate.tools.activity import ActivityContext
from toolgate.tools.capabilities import operations_done
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import READ

# What callers import from here, wherever it is defined now.
__all__ = [
    "BLOCKED",
    "CANCELLED",
    "COMPLETED",
    "DONE_HINT",
    "FAILED",
    "FENCED_HINT",
    "FINAL_ANSWER",
    "INCOMPLETE",
    "INVENTED_RESULT_HINT",
    "LIMIT",
    "AgentRun",
    "RunLimits",
    "RunOutcome",
]

log = logging.getLogger(__name__)

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


# What `_hint` sent the model after a turn with no call: a hint, or the news that a call
# written as text was not made (only hints count toward `max_tool_retries` there).
_HINTED = "hinted"
_UNMADE = "unmade"

# One record of limits for the configuration and the loop: nothing is copied field by field.
RunLimits = Limits


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
        learn_tool_streaming(model, self.memory)
        mode = initial_mode(self.calling, self.memory, model)
        self.base_prompt = system_prompt
        self.meter = RunMeter(self.run_id, self.bus, self.limits)
        self.gate = Gate(
            registry=registry,
            policy=policy,
            reviewer=reviewer,
            ctx=ctx,
            bus=self.bus,
            redactor=self.redact,
            max_argument_depth=self.calling.max_argument_depth,
            meter=self.meter,
        )
        self.runlog = RunLog(
            ctx.workspace.root,
            self.run_id,
            task,
            model.model,
            model.base_url,
            mode if mode != AUTO else NATIVE,
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
        self._compose(mode, system_prompt)
        self.bus.subscribe(self.metrics)
        self.bus.subscribe(self.runlog.on_event)
        self._task: asyncio.Task[RunOutcome] | None = None
        self._began = False
        self._cancel_reason: str | None = None
        self.finish_reason: str | None = None  # of the model's latest answer
        self.refusal: str | None = None  # the model's latest answer, when it was a refusal
        self.answer: str | None = None
        # What the project's hooks add to the person's words for the model (SessionStart,
        # UserPromptSubmit), and whether they let the run end here (Stop): set by the session.
        self.turn_context = ""
        # What the person's `@` mentions attached (`items`, `refused`): kept with the turn.
        self.turn_attached: dict[str, Any] | None = None
        # The rules files the system prompt carries, as the person names them (run_started says).
        self.rules: list[str] = []
        self.stop_check: Callable[[str | None, bool], Awaitable[str | None]] | None = None
        self._stops_refused = 0
        self._repeats = RepeatGuard(registry, ctx)
        self._calls_in_text = CallsInText(self.producer.parser, self.limits.max_tool_retries)
        # What the run holds open for its tools (MCP sessions): released when it ends.
        self._cleanups = list(cleanups)

    def _compose(self, mode: str, system_prompt: str) -> None:
        """Make the parts the loop drives: the requests, and the producer of each turn."""
        self.requests = RequestBuilder(
            run_id=self.run_id,
            base_prompt=system_prompt,
            conversation=self.conversation,
            budget=self.budget,
            registry=self.registry,
            calling=self.calling,
            limits=self.limits,
            model=self.model,
            bus=self.bus,
            redact=self.redact,
            meter=self.meter,
        )
        self.producer = TurnProducer(
            run_id=self.run_id,
            mode=mode,
            model=self.model,
            registry=self.registry,
            calling=self.calling,
            memory=self.memory,
            runlog=self.runlog,
            bus=self.bus,
            redact=self.redact,
            requests=self.requests,
            meter=self.meter,
        )

    @property
    def mode(self) -> str:
        """How tools are called now: auto, native, text or off (auto may switch to text)."""
        return self.producer.mode

    @property
    def before_compact(self) -> Callable[[], Awaitable[None]] | None:
        """The project's PreCompact hooks, run before earlier turns are summarised."""
        return self.requests.before_compact

    @before_compact.setter
    def before_compact(self, hooks: Callable[[], Awaitable[None]] | None) -> None:
        self.requests.before_compact = hooks

    @property
    def llm_calls(self) -> int:
        """The model requests the run has made so far (turns, summaries, latent answers)."""
        return self.meter.calls

    def room_for_turn(self) -> int | None:
        """Bytes a new turn's message may take beside the system prompt and the tools.

        None without a budget. Earlier turns are not counted: they can be elided or summarised.
        """
        return self.requests.room_for_turn(self.mode)

    @property
    def runlog_mode(self) -> str:
        """The mode as the run log records it."""
        return logged_mode(self.mode)

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
            rules=self.rules,
        )
        self.runlog.save()
        status, reason = COMPLETED, None
        try:
            try:
                await asyncio.wait_for(self._loop(), timeout=self.limits.max_run_seconds)
            except asyncio.TimeoutError:
                raise Stop(
                    LIMIT, f"the run took longer than {self.limits.max_run_seconds:.0f}s"
                ) from None
            status, reason = judge(
                self.runlog.doc["steps"], self.runlog.doc["events"], self.answer, self.registry
            )
        except Stop as stop:
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
                    self.run_id,
                    status,
                    reason,
                    self.answer,
                    self.requests.context(),
                    rules=rules_used(self.runlog.doc["events"]),
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

    def start_request(self) -> int:
        """Count a latent answer's model request toward `limits.max_llm_calls` (the meter's)."""
        return self.meter.start_request()

    def finish_request(self, n: int, delta: StreamDelta) -> None:
        """Record the tokens latent request `n` used, as the run's own requests are."""
        self.meter.finish_request(n, delta)

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

    async def _loop(self) -> None:
        conversation = self.conversation
        news = undo_news(self.ctx.workspace.root, conversation.runs, conversation.undone_told)
        note = "\n\n".join(part for part in (news.note, self.turn_context) if part)
        conversation.begin_turn(
            self.run_id, self.task, note=note, undone=news.undone, attached=self.turn_attached
        )
        if news.notice:
            self.bus.emit(NOTICE, self.run_id, message=news.notice)  # nothing said unseen
        self._began = True
        streaks = Streaks(self.limits.max_tool_retries)
        hints = 0
        corrected = False
        for step_number in itertools.count(1):
            if step_number > self.limits.max_steps:
                raise Stop(LIMIT, f"reached max_steps ({self.limits.max_steps})")
            step = self.runlog.begin_step(step_number)
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
            turn = await self._turn(step)
            final = self._keep(step, turn, asked_in)
            if final is not None:
                self.answer = str(final.arguments.get("answer", "")) or turn.text
                if await self._goes_on():
                    continue
                return
            if not turn.outcomes and not turn.errors:
                hinted = self._hint(turn, hints, step, step_number)
                if hinted == _HINTED:
                    hints += 1
                if hinted is not None or await self._goes_on():
                    continue
                return
            self._feed_back(turn, corrected)
            if turn.errors and self.mode == TEXT:
                corrected = True
            streaks.count(turn.outcomes, turn.errors)

    def _keep(self, step: dict[str, Any], turn: Turn, asked_in: str) -> ToolCall | None:
        """Keep a turn in the run log and the conversation; its final_answer call, if any."""
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
        turn.views = [self.requests.view(o.result, c.name) for c, o in turn.outcomes]
        for (call, outcome), view in zip(turn.outcomes, turn.views, strict=True):
            entry = log_entry(call, outcome, view, raw=self.calling.retention.store_raw_tool_output)
            self.runlog.record_call(step, entry)
            if call.name != FINAL_ANSWER.name:
                record = call_record(entry, view, self.registry.get(call.name))
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
        return final

    def _hint(self, turn: Turn, hints: int, step: dict[str, Any], number: int) -> str | None:
        """After a turn with no call: what goes back to the model before the run goes on.

        `_HINTED` for a hint about a call that did not happen, `_UNMADE` for a call written as
        text; None when the turn's words are the run's answer; Stop when they cannot be one.
        """
        why = refused(turn.refusal, turn.finish_reason)
        if why:
            self.answer = turn.text
            raise Stop(INCOMPLETE, self.redact.text(why))
        hint = self._text_hint(turn.text) if self.mode == TEXT else None
        if hint and hints < self.limits.max_tool_retries:
            self._add({"role": "user", "content": hint})
            return _HINTED
        # A call written as text, with no call made, is a failed call and never the
        # answer (agent/text_in_native.py): told, then text mode, then the end.
        unmade = None if hint else self._calls_in_text.judge(turn.text, self.mode, number)
        if unmade is not None:
            self._parse_error(unmade.error.error, unmade.error.raw_excerpt)
            self.runlog.record_call(step, unmade.log_entry())
            self.runlog.save()
            if unmade.switch:
                self.producer.switch(TEXT, unmade.switch)
            if unmade.stop:
                raise Stop(FAILED, self.redact.text(unmade.stop))
            self._add({"role": "user", "content": unmade.message})
            return _UNMADE
        self.answer = turn.text
        if hint is INVENTED_RESULT_HINT:
            # An answer that reports results no tool produced is not a finished task:
            # a person reading only "completed" would be misled.
            raise Stop(
                FAILED,
                "the model kept writing tool results itself instead of calling tools; "
                "nothing it reported was run",
            )
        return None

    def _feed_back(self, turn: Turn, corrected: bool) -> None:
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

    def _text_hint(self, text: str) -> str | None:
        """A hint for a text-mode answer that looks like a call that did not happen."""
        if self.producer.fenced(text):
            return FENCED_HINT  # small models wrap their call in a fence, which marks an example
        if "<tool_result" in text:
            return INVENTED_RESULT_HINT  # small models sometimes write the result themselves
        return None

    def _assistant_message(self, turn: Turn) -> dict[str, Any]:
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

    async def _turn(self, step: dict[str, Any]) -> Turn:
        """One model turn; each call goes through the gate as soon as it is known."""
        if self.llm_calls >= self.limits.max_llm_calls:
            raise Stop(LIMIT, f"reached max_llm_calls ({self.limits.max_llm_calls})")
        turn = Turn()
        queue: asyncio.Queue[Item] = asyncio.Queue()
        producer = asyncio.create_task(self.producer.produce(turn, queue, step))
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
                raise Stop(LIMIT, "the model kept repeating calls it had already made")
            return self.gate.invalid(call, REPEATED)
        await self._repeats.before(call)
        outcome = await self.gate.handle(call)
        await self._repeats.after(call, outcome.result)
        return outcome
