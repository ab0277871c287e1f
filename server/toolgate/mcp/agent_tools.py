"""The agent tools over MCP: listing, calling, approvals as elicitation, progress notifications.

A thin adapter over `toolgate.agent_tools`: it turns each spec into an MCP tool, lends a call
an `Ask` that puts the question (the diff in the message, accept or reject) to the client's
person when the client declared the elicitation capability, and sends the run's progress lines
as `notifications/progress` when the request carried a progress token.

How the question travels depends on the protocol the client chose. Up to 2025-11-25 the
server sends `elicitation/create` while the call is in flight. From 2026-07-28 a server cannot
send requests of its own: the call answers `InputRequiredResult` (the elicitation inside, and
a `requestState` naming the job), the job waits, and the client's retry of the call carries
the person's answer, which the job receives; the last round returns the job's result.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from toolgate.agent.retention import fit_result
from toolgate.agent_tools import AgentJobs, AgentToolSpec, Answer, Ask, CallContext
from toolgate.agent_tools.jobs import Progress
from toolgate.records import ToolResult

log = logging.getLogger(__name__)

# The longest diff an elicitation message carries: a host shows it in a dialog.
MAX_MESSAGE_CHARS = 20_000
# The longest hunk a form's box describes (the message holds the whole diff).
MAX_PART_CHARS = 2_000

RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "success": {"type": "boolean"},
        "data": {},
        "error": {"type": ["string", "null"]},
        "suggestions": {"type": "array", "items": {"type": "string"}},
        "duration_seconds": {"type": "number"},
    },
    "required": ["success", "data", "error", "suggestions", "duration_seconds"],
}

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Apply it",
            "description": "Untick to reject",
            "default": True,
        },
        "reason": {
            "type": "string",
            "title": "Reason",
            "description": "Why not (optional; the agent reads it)",
        },
    },
}


def mcp_tool(spec: AgentToolSpec) -> Any:
    """An agent tool as MCP lists it."""
    import mcp_types as types

    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=RESULT_SCHEMA,
        annotations=types.ToolAnnotations(
            read_only_hint=spec.read_only,
            destructive_hint=not spec.read_only,
            open_world_hint=False,
        ),
    )


def can_elicit(ctx: Any) -> bool:
    """Whether the client declared form elicitation (an empty `elicitation` object counts)."""
    capabilities = ctx.session.client_capabilities
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


def _message(title: str, details: str) -> str:
    if len(details) > MAX_MESSAGE_CHARS:
        details = details[:MAX_MESSAGE_CHARS] + "\n… (the rest is cut)\n"
    return f"{title}\n\n{details}"


def answer_schema(parts: Sequence[str]) -> dict[str, Any]:
    """The form of one question: apply or not, a reason, and a box for each part when several.

    Elicitation forms are flat objects of primitive fields, so a change's hunks are booleans
    `hunk_1` … `hunk_N`, each titled with its header and described by its lines.
    """
    if len(parts) < 2:
        return ANSWER_SCHEMA
    boxes: dict[str, Any] = {}
    for i, part in enumerate(parts, 1):
        header, _, lines = part.partition("\n")
        if len(lines) > MAX_PART_CHARS:
            lines = lines[:MAX_PART_CHARS] + "\n… (the rest is in the message)"
        boxes[f"hunk_{i}"] = {
            "type": "boolean",
            "title": f"Hunk {i} of {len(parts)}: {header}",
            "description": lines,
            "default": True,
        }
    properties = dict(ANSWER_SCHEMA["properties"])
    properties["approve"] = {**properties["approve"], "description": "Untick to reject it all"}
    return {"type": "object", "properties": {**properties, **boxes}}


def _answer(reply: Any, parts: int = 0) -> Answer:
    """The person's elicitation reply as an answer: accept with `approve` unticked rejects."""
    content = getattr(reply, "content", None) or {}
    reason = content.get("reason")
    reason = (str(reason).strip() or None) if reason is not None else None
    action = getattr(reply, "action", "cancel")
    if action != "accept":
        return Answer(False, reason or f"the person chose {action}")
    if content.get("approve", True) is False:
        return Answer(False, reason)
    if parts < 2:
        return Answer(True, reason)
    # A box the client left out keeps its default, ticked.
    ticked = frozenset(i for i in range(parts) if content.get(f"hunk_{i + 1}", True) is not False)
    return Answer(True, reason, None if len(ticked) == parts else ticked)


def elicitation_ask(ctx: Any) -> Ask:
    """An `Ask` that sends `elicitation/create` while the call is in flight (to 2025-11-25)."""

    async def ask(title: str, details: str, parts: Sequence[str] = ()) -> Answer:
        try:
            reply = await ctx.session.elicit_form(
                _message(title, details), answer_schema(parts), related_request_id=ctx.request_id
            )
        except Exception as exc:  # the client failed to answer: nothing is applied
            log.warning("elicitation failed: %s", exc)
            return Answer(False, f"the MCP client could not ask its person: {exc}")
        return _answer(reply, len(parts))

    return ask


def progress_token(ctx: Any) -> str | int | None:
    """The request's progress token, if the caller asked for progress."""
    meta = ctx.meta or {}
    token = meta.get("progress_token", meta.get("progressToken"))
    return token if isinstance(token, (str, int)) else None


def to_result(result: ToolResult, max_bytes: int) -> Any:
    """`{success, data, error, suggestions, duration_seconds}` as text and structured content."""
    import mcp_types as types

    fitted = fit_result(result, max_bytes)
    payload = {
        "success": fitted.success,
        "data": fitted.data,
        "error": fitted.error,
        "suggestions": list(fitted.suggestions),
        "duration_seconds": fitted.duration_seconds,
    }
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=json.loads(text),
        is_error=not fitted.success,
    )


async def _pump(ctx: Any, token: str | int, receive: Any) -> None:
    """Send each progress line of one request as a notification (best effort)."""
    count = 0
    async with receive:
        async for line in receive:
            count += 1
            try:
                await ctx.session.send_progress_notification(
                    token, count, None, line, related_request_id=ctx.request_id
                )
            except Exception as exc:  # progress is best effort; the job goes on
                log.debug("progress notification failed: %s", exc)


@dataclass
class _Waiting:
    """A job started by one request and carried on by the client's retries of it."""

    task: asyncio.Task[ToolResult] | None = None
    # Each question: its message, its parts, and where its answer goes.
    questions: asyncio.Queue[tuple[str, Sequence[str], asyncio.Future[Answer]]] = field(
        default_factory=asyncio.Queue
    )
    answer: asyncio.Future[Answer] | None = None
    parts: int = 0  # of the question now asked
    progress: Progress | None = None  # where the current round's progress lines go


def _drop(line: str) -> None:
    """Progress nobody asked for."""


class AgentToolCalls:
    """Agent tool calls of one server: in flight, or waiting for their person across rounds."""

    def __init__(self, jobs: AgentJobs, max_bytes: int) -> None:
        self.jobs = jobs
        self.max_bytes = max_bytes
        self._waiting: dict[str, _Waiting] = {}

    async def call(self, ctx: Any, params: Any, log: Progress = _drop) -> Any:
        """Answer one `tools/call` of an agent tool (or one retry of it).

        Each progress line goes to `log` (the call's log notifications), and as a progress
        notification when the request carried a progress token.
        """
        token = progress_token(ctx)
        send, receive = anyio.create_memory_object_stream[str](math.inf)

        def progress(line: str) -> None:
            log(line)
            if token is not None:
                send.send_nowait(line)

        async with anyio.create_task_group() as group:
            if token is not None:
                group.start_soon(_pump, ctx, token, receive)
            try:
                if getattr(ctx.session, "can_send_request", True) or not can_elicit(ctx):
                    context = CallContext(
                        ask=elicitation_ask(ctx) if can_elicit(ctx) else None, progress=progress
                    )
                    result = await self.jobs.call(params.name, params.arguments, context)
                    return to_result(result, self.max_bytes)
                return await self._round(params, progress)
            finally:
                send.close()

    async def _round(self, params: Any, progress: Progress) -> Any:
        """One round of a call whose questions travel as `InputRequiredResult` (2026-07-28)."""
        state = getattr(params, "request_state", None)
        if state is not None:
            waiting = self._waiting.get(state)
            if waiting is None:
                return to_result(
                    ToolResult.fail(
                        "this call's job is no longer known here (the server was restarted, "
                        "or the job ended); call the tool again"
                    ),
                    self.max_bytes,
                )
            reply = (getattr(params, "input_responses", None) or {}).get("approval")
            if waiting.answer is not None and not waiting.answer.done():
                waiting.answer.set_result(_answer(reply, waiting.parts))
        else:
            state = uuid.uuid4().hex
            waiting = _Waiting()
            context = CallContext(ask=self._ask(waiting), progress=lambda line: _say(waiting, line))
            waiting.task = asyncio.ensure_future(
                self.jobs.call(params.name, params.arguments, context)
            )
            self._waiting[state] = waiting
            # A job that ends with no round waiting (its time ran out while the client never
            # came back) is forgotten; a late retry is told so.
            key = state
            waiting.task.add_done_callback(lambda _: self._waiting.pop(key, None))
        waiting.progress = progress
        job = waiting.task
        assert job is not None
        question = asyncio.ensure_future(waiting.questions.get())
        try:
            await asyncio.wait({job, question}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # The client gave up on the call: so does the job (its run ends as cancelled).
            question.cancel()
            job.cancel()
            raise
        if not question.done():
            question.cancel()
            self._waiting.pop(state, None)
            waiting.progress = None
            return to_result(job.result(), self.max_bytes)
        message, parts, waiting.answer = question.result()
        waiting.parts = len(parts)
        waiting.progress = None
        return _input_required(message, answer_schema(parts), state)

    def _ask(self, waiting: _Waiting) -> Ask:
        async def ask(title: str, details: str, parts: Sequence[str] = ()) -> Answer:
            future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
            await waiting.questions.put((_message(title, details), parts, future))
            return await future

        return ask


def _say(waiting: _Waiting, line: str) -> None:
    if waiting.progress is not None:
        waiting.progress(line)


def _input_required(message: str, schema: dict[str, Any], state: str) -> Any:
    import mcp_types as types

    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
    )
    return types.InputRequiredResult(input_requests={"approval": request}, request_state=state)
