"""The conformance suite's fixture tools: `toolgate mcp --conformance-fixtures`, for testing only.

The official suite (npm `@modelcontextprotocol/conformance`) calls tools of fixed names to see
that a server's transport, logging, progress and elicitation behave. They touch no workspace:
they only let the suite reach the code every real tool goes through — the same server, its
`tools/list` and `tools/call` handlers, its log lines (`mcp/logs.py`), progress notifications
and elicitation requests, and the same HTTP transport. Never offered unless asked for.

Left out on purpose, as no Toolgate tool does it: image, audio and embedded-resource content,
sampling, roots, and resources or prompts of any kind (docs/MCP.md lists the scenarios).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from toolgate.mcp.logs import CallLog

# The suite's own texts, which its checks compare.
SIMPLE_TEXT = "This is a simple text response for testing."
ERROR_TEXT = "This tool intentionally returns an error for testing"
STEP = 0.05  # seconds between the lines of the logging and progress fixtures

_NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}

ELICITATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}

DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
}

_OPTIONS = ["option1", "option2", "option3"]
ENUMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": _OPTIONS},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": _OPTIONS}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

Handler = Callable[[Any, Any, CallLog], Awaitable[Any]]


def _text(text: str, *, error: bool = False) -> Any:
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


async def _simple_text(ctx: Any, params: Any, say: CallLog) -> Any:
    return _text(SIMPLE_TEXT)


async def _error(ctx: Any, params: Any, say: CallLog) -> Any:
    return _text(ERROR_TEXT, error=True)


async def _logging(ctx: Any, params: Any, say: CallLog) -> Any:
    for i, line in enumerate(
        ("Tool execution started", "Tool processing data", "Tool execution completed")
    ):
        if i:
            await anyio.sleep(STEP)
        say("info", line)
    return _text("Tool with logging executed successfully")


async def _progress(ctx: Any, params: Any, say: CallLog) -> Any:
    from toolgate.mcp.agent_tools import progress_token

    token = progress_token(ctx)
    for i, done in enumerate((0, 50, 100)):
        if i:
            await anyio.sleep(STEP)
        if token is not None:
            await ctx.session.send_progress_notification(
                token, done, 100, f"Completed step {done} of 100", related_request_id=ctx.request_id
            )
    return _text(str(token if token is not None else 0))


async def _elicit(ctx: Any, message: str, schema: dict[str, Any], prefix: str) -> Any:
    from toolgate.mcp.agent_tools import can_elicit

    if not can_elicit(ctx):
        return _text("the client does not support elicitation", error=True)
    reply = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    content = json.dumps(reply.content or {}) if reply.action == "accept" else "{}"
    return _text(f"{prefix}: action={reply.action}, content={content}")


async def _elicitation(ctx: Any, params: Any, say: CallLog) -> Any:
    message = str((params.arguments or {}).get("message") or "Please provide your information")
    return await _elicit(ctx, message, ELICITATION_SCHEMA, "User response")


async def _defaults(ctx: Any, params: Any, say: CallLog) -> Any:
    return await _elicit(
        ctx, "Please provide user information", DEFAULTS_SCHEMA, "Elicitation completed"
    )


async def _enums(ctx: Any, params: Any, say: CallLog) -> Any:
    return await _elicit(
        ctx,
        "Please select values using different enum schema types",
        ENUMS_SCHEMA,
        "Elicitation completed",
    )


async def _reconnection(ctx: Any, params: Any, say: CallLog) -> Any:
    say("info", "Before disconnect")
    await say.flush()
    if ctx.close_sse_stream is not None:
        # The server ends this call's stream; the client reconnects with Last-Event-ID.
        await ctx.close_sse_stream()
    await anyio.sleep(0.2)
    say("info", "After reconnect")
    return _text("Reconnection test completed")


async def _schema_tool(ctx: Any, params: Any, say: CallLog) -> Any:
    return _text("json_schema_2020_12_tool")


# Protocol 2026-07-28's InputRequiredResult (SEP-2322): a call answers with the questions it
# needs answered, and the client's retry carries the answers (and the state it was given).

NAME_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
_CONFIRM_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
# Signs the state the tampering fixture hands out (per process: a restart forgets it).
_STATE_KEY = secrets.token_bytes(32)


def _ask(key: str, message: str, schema: dict[str, Any], state: str | None = None) -> Any:
    import mcp_types as types

    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
    )
    return types.InputRequiredResult(input_requests={key: request}, request_state=state)


def _answer(params: Any, key: str) -> dict[str, Any] | None:
    """The content of the answer to `key` in the client's retry, if it brought one."""
    reply = (getattr(params, "input_responses", None) or {}).get(key)
    if reply is None:
        return None
    content = getattr(reply, "content", None)
    if content is None and isinstance(reply, dict):
        content = reply.get("content")
    return dict(content or {})


async def _input_elicitation(ctx: Any, params: Any, say: CallLog) -> Any:
    answer = _answer(params, "user_name")
    if answer is None:
        return _ask("user_name", "What is your name?", NAME_FORM)
    return _text(f"Hello, {answer.get('name', 'stranger')}!")


async def _input_request_state(ctx: Any, params: Any, say: CallLog) -> Any:
    if _answer(params, "confirm") is not None and params.request_state == "request-state-nonce":
        return _text("state-ok: confirmation received")
    return _ask("confirm", "Please confirm", _CONFIRM_FORM, "request-state-nonce")


async def _input_multi_round(ctx: Any, params: Any, say: CallLog) -> Any:
    try:
        state = json.loads(params.request_state) if params.request_state else {"round": 0}
    except ValueError:
        state = {"round": 0}
    if state.get("round") == 1 and (step1 := _answer(params, "step1")) is not None:
        colour = {"type": "object", "properties": {"color": {"type": "string"}}}
        colour["required"] = ["color"]
        next_state = json.dumps({"round": 2, "name": step1.get("name")})
        return _ask("step2", "Step 2: What is your favorite color?", colour, next_state)
    if state.get("round") == 2 and (step2 := _answer(params, "step2")) is not None:
        return _text(f"{state.get('name')} likes {step2.get('color')}.")
    # The first round, or an answer out of order: from the start.
    return _ask("step1", "Step 1: What is your name?", NAME_FORM, json.dumps({"round": 1}))


def _signed(state: str) -> str:
    digest = hmac.new(_STATE_KEY, state.encode(), hashlib.sha256).hexdigest()
    return f"{state}.{digest}"


async def _input_tampered_state(ctx: Any, params: Any, say: CallLog) -> Any:
    if params.request_state is None:
        return _ask("confirm", "Please confirm", _CONFIRM_FORM, _signed("round-1"))
    state, _, _ = params.request_state.rpartition(".")
    if not hmac.compare_digest(_signed(state), params.request_state):
        from mcp_types import INVALID_PARAMS

        from mcp import MCPError

        raise MCPError(code=INVALID_PARAMS, message="requestState failed its integrity check")
    return _text(f"state-ok: {state}")


_FIXTURES: dict[str, tuple[str, dict[str, Any], Handler]] = {
    "test_simple_text": ("Returns a simple text", _NO_ARGUMENTS, _simple_text),
    "test_tool_with_logging": ("Sends three log lines", _NO_ARGUMENTS, _logging),
    "test_tool_with_progress": ("Reports progress 0, 50, 100", _NO_ARGUMENTS, _progress),
    "test_error_handling": ("Always fails", _NO_ARGUMENTS, _error),
    "test_elicitation": (
        "Asks the client's person for a username and email",
        {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What to ask"}},
            "required": ["message"],
        },
        _elicitation,
    ),
    "test_elicitation_sep1034_defaults": (
        "Asks with a default for every primitive type",
        _NO_ARGUMENTS,
        _defaults,
    ),
    "test_elicitation_sep1330_enums": (
        "Asks with every kind of enum",
        _NO_ARGUMENTS,
        _enums,
    ),
    "test_reconnection": ("Closes its SSE stream halfway", _NO_ARGUMENTS, _reconnection),
    "test_input_required_result_elicitation": (
        "Asks for a name through InputRequiredResult",
        _NO_ARGUMENTS,
        _input_elicitation,
    ),
    "test_input_required_result_request_state": (
        "Asks for a confirmation, with a requestState to echo",
        _NO_ARGUMENTS,
        _input_request_state,
    ),
    "test_input_required_result_multi_round": (
        "Asks in two rounds, the state evolving",
        _NO_ARGUMENTS,
        _input_multi_round,
    ),
    "test_input_required_result_tampered_state": (
        "Asks with a signed requestState, and refuses a tampered one",
        _NO_ARGUMENTS,
        _input_tampered_state,
    ),
    "json_schema_2020_12_tool": (
        "Lists a JSON Schema 2020-12 input schema",
        JSON_SCHEMA_2020_12,
        _schema_tool,
    ),
}


class ConformanceFixtures:
    """The fixture tools, listed and called beside the real ones."""

    def names(self) -> frozenset[str]:
        """The fixture tools' names."""
        return frozenset(_FIXTURES)

    def tools(self) -> list[Any]:
        """The fixture tools as `tools/list` shows them."""
        import mcp_types as types

        return [
            types.Tool(
                name=name,
                description=f"Conformance fixture: {description}",
                input_schema=schema,
                annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
            )
            for name, (description, schema, _) in _FIXTURES.items()
        ]

    async def call(self, ctx: Any, params: Any, say: CallLog) -> Any:
        """Run one fixture (`params`: the `tools/call` request's)."""
        return await _FIXTURES[params.name][2](ctx, params, say)
