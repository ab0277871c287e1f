"""Llama 3's JSON calls: `{"name": …, "parameters": …}` alone on a line, or after a python tag.

    {"name": "read_file", "parameters": {"path": "src/app.py"}}
    <|python_tag|>{"name": "read_file", "parameters": {"path": "src/app.py"}}

A JSON object (or list of them) at a line start counts only when it is alone on its line and
names a registered tool; otherwise it is prose, as JSON in an answer usually is. Written by
Llama 3.1, 3.2 and 3.3 Instruct, and by many fine-tunes of them.
"""

from __future__ import annotations

from toolgate.calls.cursor import WS, Cursor, skip
from toolgate.calls.json_value import CALL_PREFIX, CALL_VIABLE, st_json
from toolgate.calls.openings import AfterLt, AtLineStart
from toolgate.calls.syntaxes.base import Syntax

NAME = "llama_json"
DESCRIPTION = '{"name": …, "parameters": …} alone on its line, or after <|python_tag|>'
PYTHON_TAG = "<|python_tag|>"


def open_line_json(p: Cursor, s: int) -> None:
    """A JSON call object, or a list of them, alone on its line from `s`."""
    p.prose_to(s)
    k = p.start("llama json call", st_json)
    k.syntax, k.after, k.strict = NAME, "standalone", False


def at_line(p: Cursor, s: int) -> bool | None:
    """At `{` or `[` at a line start (from `s`): a call object naming a registered tool opens."""
    got = p.classify(CALL_PREFIX, CALL_VIABLE, s)
    if got is ...:
        return False
    if got is None or got.group(2) not in p.tools:
        return None
    open_line_json(p, s)
    return True


def open_python_tag(p: Cursor) -> bool:
    """At `<|python_tag|>`: a JSON call follows, or it was prose."""
    k = p.start("<|python_tag|> call", st_pytag)
    k.syntax, k.after = NAME, ""
    return p.take(p.pos + len(PYTHON_TAG)) or True


def st_pytag(p: Cursor) -> bool:
    """After `<|python_tag|>`: a JSON object, or prose."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    ws = skip(WS, buf, pos)
    if ws >= n and not p.eof:
        return False
    if ws < n and buf[ws] == "{":
        if not p.take(ws):
            return True
        p.k.value_start = p.acc_n
        p.state = st_json
        return True
    p.as_prose(p.done())
    return True


class LlamaJson(Syntax):
    """A JSON call alone on its line, or after `<|python_tag|>`: it ends with its value."""

    name = NAME
    example = DESCRIPTION
    models = "Llama 3.1, 3.2 and 3.3 Instruct"
    forms = ((NAME, DESCRIPTION),)
    openings = (
        AfterLt(r"\|python_tag\|>", (PYTHON_TAG,), lambda p, m: open_python_tag(p)),
        AtLineStart(("{", "["), at_line),
    )
