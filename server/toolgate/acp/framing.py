"""Newline-delimited frames from stdin, with an answer for every line the SDK would drop.

The SDK logs and skips a line that is not JSON, and reads a line of any length into memory.
Here each line is checked first: one over `MAX_LINE_BYTES` is discarded while it is read
(only its first bytes are kept, to find its id), one that is not a JSON object is answered
with a JSON-RPC error, and the rest go on to the SDK's reader unchanged.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any

MAX_LINE_BYTES = 8 * 1024 * 1024
_HEAD_BYTES = 4096  # what is kept of an oversized line to find its id
# What makes a JSON object a message at all: a request or notification, or a response.
_MESSAGE_FIELDS = frozenset({"method", "id", "result", "error"})
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def error_line(request_id: Any, code: int, message: str) -> bytes:
    """One JSON-RPC error response, newline-terminated."""
    doc = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(doc).encode("utf-8") + b"\n"


def _id_in(head: bytes) -> Any:
    match = _ID.search(head)
    if match is None:
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None


def _is_id(value: Any) -> bool:
    """Whether a value may be a JSON-RPC id (a string or a number; null is read as none)."""
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def check_line(line: bytes) -> bytes | None:
    """The error to answer for a complete line, or None when it may go on to the SDK.

    An error for a request whose id could not be read carries `"id": null` (JSON-RPC 2.0,
    section 5): the SDK would echo an object or a boolean as the id, which no client can match.
    """
    if not line.strip():
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return error_line(None, -32700, "parse error: the line is not JSON")
    if not isinstance(message, dict):
        return error_line(None, -32600, "invalid request: a message must be a JSON object")
    if not _MESSAGE_FIELDS & message.keys():
        return error_line(
            None,
            -32600,
            "invalid request: a message needs a method (a request or a notification) "
            "or an id (a response)",
        )
    if message.get("id") is not None and not _is_id(message["id"]):
        return error_line(None, -32600, "invalid request: the id must be a string or number")
    if "method" in message and not isinstance(message["method"], str):
        return error_line(message.get("id"), -32600, "invalid request: method must be a string")
    return None


async def pump(
    source: asyncio.StreamReader, sink: asyncio.StreamReader, out: asyncio.StreamWriter
) -> None:
    """Read lines from `source`; feed the good ones to `sink`, answer the rest on `out`."""
    buffer = bytearray()
    dropping = False  # inside an oversized line
    head = b""
    while True:
        chunk = await source.read(65536)
        if not chunk:
            break
        buffer += chunk
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                if len(buffer) > MAX_LINE_BYTES and not dropping:
                    dropping, head = True, bytes(buffer[:_HEAD_BYTES])
                if dropping:
                    buffer.clear()
                break
            line = bytes(buffer[: end + 1])
            del buffer[: end + 1]
            if dropping:
                dropping = False
                out.write(
                    error_line(
                        _id_in(head),
                        -32600,
                        f"invalid request: the message is over {MAX_LINE_BYTES} bytes",
                    )
                )
                continue
            if len(line) > MAX_LINE_BYTES:
                out.write(
                    error_line(
                        _id_in(line[:_HEAD_BYTES]),
                        -32600,
                        f"invalid request: the message is over {MAX_LINE_BYTES} bytes",
                    )
                )
                continue
            refusal = check_line(line)
            if refusal is not None:
                out.write(refusal)
            else:
                sink.feed_data(line)
    if buffer and not dropping and check_line(bytes(buffer)) is None:
        sink.feed_data(bytes(buffer) + b"\n")
    sink.feed_eof()


async def stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter, asyncio.StreamReader]:
    """(stdin's raw reader, stdout's writer, the checked reader the SDK reads)."""
    from acp.stdio import _WritePipeProtocol  # the SDK's own writer protocol (drain support)

    loop = asyncio.get_running_loop()
    raw = asyncio.StreamReader(limit=2**31)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(raw), sys.stdin)
    protocol = _WritePipeProtocol()
    transport, _ = await loop.connect_write_pipe(lambda: protocol, sys.stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    checked = asyncio.StreamReader(limit=MAX_LINE_BYTES * 2)
    return raw, writer, checked
