"""The shape JSON-RPC 2.0 gives every message, checked on what a server writes."""

from __future__ import annotations

from typing import Any


def _is_id(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def shape_problem(message: Any) -> str | None:
    """What makes `message` no JSON-RPC 2.0 message, or None when it is one.

    A response carries `id` — `null` when the request's id could not be read (section 5) —
    and exactly one of `result` and `error`; an error has an integer code and a message.
    """
    if not isinstance(message, dict):
        return "not an object"
    if message.get("jsonrpc") != "2.0":
        return 'no "jsonrpc": "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a method that is not a string"
        if "id" in message and not _is_id(message["id"]):
            return "a request whose id is not a string or number"
        return None
    if "id" not in message:
        return "a response without an id (null when the request's id could not be read)"
    if message["id"] is not None and not _is_id(message["id"]):
        return "a response whose id is not a string, number or null"
    if ("result" in message) == ("error" in message):
        return "a response needs exactly one of result and error"
    if "error" in message:
        error = message["error"]
        if not isinstance(error, dict):
            return "an error that is not an object"
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            return "an error without an integer code"
        if not isinstance(error.get("message"), str):
            return "an error without a message"
    return None
