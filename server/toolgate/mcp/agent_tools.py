"""The agent tools over MCP: listing, calling, approvals as elicitation, progress notifications.

A thin adapter over `toolgate.agent_tools`: it turns each spec into an MCP tool, lends a call
an `Ask` that sends `elicitation/create` (the diff in the message, accept or reject) when the
client declared the elicitation capability, and sends the run's progress lines as
`notifications/progress` when the request carried a progress token.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import anyio

from toolgate.agent.retention import fit_result
from toolgate.agent_tools import AgentJobs, AgentToolSpec, Answer, Ask, CallContext
from toolgate.records import ToolResult

log = logging.getLogger(__name__)

# The longest diff an elicitation message carries: a host shows it in a dialog.
MAX_MESSAGE_CHARS = 20_000

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


def elicitation_ask(ctx: Any) -> Ask:
    """An `Ask` that puts the question to the client's person through elicitation."""

    async def ask(title: str, details: str) -> Answer:
        if len(details) > MAX_MESSAGE_CHARS:
            details = details[:MAX_MESSAGE_CHARS] + "\n… (the rest is cut)\n"
        message = f"{title}\n\n{details}"
        try:
            reply = await ctx.session.elicit_form(
                message, ANSWER_SCHEMA, related_request_id=ctx.request_id
            )
        except Exception as exc:  # the client failed to answer: nothing is applied
            log.warning("elicitation failed: %s", exc)
            return Answer(False, f"the MCP client could not ask its person: {exc}")
        reason = (reply.content or {}).get("reason") if reply.content else None
        reason = str(reason).strip() or None if reason is not None else None
        if reply.action != "accept":
            return Answer(False, reason or f"the person chose {reply.action}")
        approved = (reply.content or {}).get("approve", True) is not False
        return Answer(approved, reason)

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


async def call_agent_tool(
    ctx: Any, jobs: AgentJobs, name: str, arguments: dict[str, Any] | None, max_bytes: int
) -> Any:
    """Run one agent tool for an MCP request; progress flows while it runs."""
    token = progress_token(ctx)
    send, receive = anyio.create_memory_object_stream[str](math.inf)

    def progress(line: str) -> None:
        if token is not None:
            send.send_nowait(line)

    async def pump() -> None:
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

    context = CallContext(ask=elicitation_ask(ctx) if can_elicit(ctx) else None, progress=progress)
    async with anyio.create_task_group() as group:
        group.start_soon(pump)
        try:
            result = await jobs.call(name, arguments, context)
        finally:
            send.close()
    return to_result(result, max_bytes)
