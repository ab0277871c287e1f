"""DeepSeek V3.2, V4 and V4.1: DSML blocks of `invoke` elements, one per call.

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="read_file">
    <｜DSML｜parameter name="path" string="true">src/app.py</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

V4 names the block `tool_calls`; V4.1 names it `calls` and writes a blank after `｜DSML｜` in
every tag (`<｜DSML｜ invoke name="…">`). A parameter marked `string="true"` is text kept as
written; one marked `string="false"`, or not marked, is JSON when it parses as JSON. The tool's
schema has the last word, as in DeepSeek's own parsers (`_value` says how). An invoke may hold
its arguments as one JSON object, and one with no arguments may close itself
(`<｜DSML｜invoke name="submit"/>`). Each call is emitted the moment its `</｜DSML｜invoke>`
arrives, before the block ends; invokes written without the block around them are read too.
Written by DeepSeek V3.2, V3.2-Speciale, V4 and V4.1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from toolgate.calls.arguments import schema_types, tool_properties, typed_value
from toolgate.calls.cursor import CLOSE_TAG, WINDOW, WS, Construct, Cursor, fail, skip, waits_for
from toolgate.calls.openings import AfterLt
from toolgate.calls.syntaxes.base import Syntax

NAME = "deepseek_dsml"
DESCRIPTION = (
    '<｜DSML｜function_calls><｜DSML｜invoke name="NAME"><｜DSML｜parameter name="ARGUMENT" '
    'string="true">value</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>'
)
_BLOCK_OPEN = re.compile(r"<｜DSML｜( ?)(function_calls|tool_calls|calls)>")
_BLOCK_CLOSE = re.compile(r"</｜DSML｜ ?(?:function_calls|tool_calls|calls)>")
_INVOKE_OPEN = re.compile(r'<｜DSML｜ ?invoke\s+name\s*=\s*"([^"<>]*)"\s*>')
_INVOKE_CLOSE = re.compile(r"</｜DSML｜ ?invoke>")
# An invoke with no arguments may close itself, as DeepSeek's parsers accept.
_INVOKE_EMPTY = re.compile(r'<｜DSML｜ ?invoke\s+name\s*=\s*"([^"<>]*)"\s*/>')
_PARAMETER = re.compile(
    r'<｜DSML｜ ?parameter\s+name\s*=\s*"([^"<>]*)"(?:\s+string\s*=\s*"(\w*)")?\s*>'
    r"(.*?)</｜DSML｜ ?parameter>",
    re.DOTALL,
)
# A tag not yet complete: what may still become one of the tags above.
_TAG_START = re.compile(r"(?:</?(?:｜(?:D(?:S(?:M(?:L(?:｜[^>]*)?)?)?)?)?)?)?")
_HOLD = len("</｜DSML｜ invoke>")
# Arguments some DeepSeek models wrap in one parameter, which their own parsers unwrap.
_WRAPPERS = ("arguments", "input")
_PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "number": (int, float),
    "array": list,
    "object": dict,
}


def open_dsml(p: Cursor, m: re.Match[str]) -> bool:
    """At `<｜DSML｜`: a block's opening, a bare invoke, or prose once neither can follow."""
    s = m.start()
    seg = p.buf[s : s + WINDOW]
    block = _BLOCK_OPEN.match(seg)
    if block is None and _INVOKE_OPEN.match(seg) is None and _INVOKE_EMPTY.match(seg) is None:
        if not p.eof and len(seg) < WINDOW and ">" not in seg:
            return False  # the tag is not complete yet
        p.prose_to(s + 1)
        return True
    k = p.start(block.group() if block else "<｜DSML｜invoke>", st_dsml)
    k.syntax = NAME
    k.wrapped = block is not None
    if block is not None:
        k.after = f"</｜DSML｜{block.group(1)}{block.group(2)}>"
        return p.take(s + block.end()) or True
    return True


def _closers(k: Construct) -> re.Pattern[str] | None:
    # Between invokes of a bare run, any text may end it: read every chunk then.
    return CLOSE_TAG if k.wrapped or k.child is not None else None


@waits_for(_closers)
def st_dsml(p: Cursor) -> bool:
    """The invokes of a block, each emitted when it closes, to the block's closing tag."""
    k = p.k
    buf, n = p.buf, len(p.buf)
    while True:
        if k.child is not None:  # inside an invoke: hold it to its closing tag
            end = _INVOKE_CLOSE.search(buf, p.pos)
            if end is None:
                if p.eof:
                    p.take(n)
                    return _unclosed(p, f'<｜DSML｜invoke name="{k.child}">', "</｜DSML｜invoke>")
                lt = buf.rfind("<", max(p.pos, n - _HOLD))
                return not p.take(lt if lt >= 0 else n)
            if not p.take(end.end()):
                return True
            text = p.construct_text()
            k.child = None
            k.depth += 1
            _call(p, text[k.value_start :])
            continue
        ws = skip(WS, buf, p.pos)
        invoke = _INVOKE_OPEN.match(buf, ws, ws + WINDOW)
        if invoke is not None:
            if not p.take(ws):
                return True
            k.child, k.value_start = invoke.group(1), p.acc_n
            if not p.take(invoke.end()):
                return True
            continue
        empty = _INVOKE_EMPTY.match(buf, ws, ws + WINDOW)
        if empty is not None:
            if not p.take(ws):
                return True
            start = p.acc_n
            if not p.take(empty.end()):
                return True
            k.depth += 1
            p.call(empty.group(1).strip(), {}, NAME, p.construct_text()[start:])
            continue
        close = _BLOCK_CLOSE.match(buf, ws)
        if close is not None:
            if not p.take(close.end()):
                return True
            text = p.done()
            if not k.depth:
                p.error(f"{NAME}: no invoke inside {k.what}; expected {DESCRIPTION}", text)
            return True
        rest = buf[ws : ws + WINDOW]
        if not p.eof and len(rest) < WINDOW and ">" not in rest and _TAG_START.fullmatch(rest):
            # A tag may still be coming. After a bare invoke the blanks stay out of the
            # construct until it does: if prose follows, they are prose, however they arrived.
            return not p.take(ws) if k.wrapped else False
        if not k.wrapped:
            p.done()  # a run of bare invokes ends at other text, which is prose
            return True
        if ws >= n:  # the output ended between invokes
            if k.depth:
                p.take(n)
                p.done()  # every invoke closed, and each ran: only the block's end is missing
                return True
            p.take(n)
            return _unclosed(p, k.what, k.after)
        p.take(ws)
        fail(
            p,
            f'{NAME}: unexpected text inside {k.what}; expected <｜DSML｜invoke name="NAME"> '
            f"or {k.after}",
            skip_to=k.after,
        )
        return True


def _unclosed(p: Cursor, what: str, closing: str) -> bool:
    """The output ended inside `what`: an error, and nothing of it runs."""
    p.error(
        f"unclosed {what}: the output ended before {closing}; nothing was run for it; "
        f"expected {DESCRIPTION}",
        p.done(),
    )
    return True


def _call(p: Cursor, text: str) -> None:
    """Emit the call of one whole `<｜DSML｜invoke …>…</｜DSML｜invoke>` element."""
    head = _INVOKE_OPEN.match(text)
    tail = _INVOKE_CLOSE.search(text, head.end() if head else 0)
    assert head is not None and tail is not None  # the state read both
    name = head.group(1).strip()
    body = text[head.end() : tail.start()]
    if body.strip().startswith("{"):  # the arguments as one JSON object
        p.call(name, body.strip(), NAME, text)
        return
    props = tool_properties(p.tools, name)
    args: dict[str, Any] = {}
    pos = 0
    for m in _PARAMETER.finditer(body):
        if body[pos : m.start()].strip():
            break
        args[m.group(1)] = _value(m.group(3), m.group(2), props.get(m.group(1)))
        pos = m.end()
    if body[pos:].strip():
        p.error(
            f'{NAME}: unexpected text inside <｜DSML｜invoke name="{name}">: '
            f"{body[pos:].strip()[:40]!r}; expected {DESCRIPTION}",
            text,
        )
        return
    p.call(name, _unwrapped(args, props), NAME, text)


def _value(raw: str, string: str | None, schema: Any) -> Any:
    """A parameter's value, read as DeepSeek's parsers read it.

    `string="true"`: text, typed by the schema when that gives a type. `string="false"` (or no
    mark): JSON when it parses, kept when it fits the schema's type or the schema gives none;
    when it does not fit, a schema that allows a string keeps the text (`null` for a string
    argument is the word), and any other keeps the JSON the model marked as JSON.
    """
    types = schema_types(schema)
    if string != "true":
        try:
            parsed = json.loads(raw, strict=False)
        except (ValueError, RecursionError):
            pass  # not JSON after all: the text, typed by the schema as a marked string is
        else:
            if not types or any(_fits(parsed, t) for t in types) or "string" not in types:
                return parsed
            return raw
    return typed_value(raw, schema) if types else raw


def _fits(value: Any, json_type: str) -> bool:
    """Whether a parsed JSON value is of `json_type`."""
    if isinstance(value, bool):
        return json_type == "boolean"
    if json_type == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if json_type == "null":
        return value is None
    python = _PYTHON_TYPES.get(json_type)
    return python is not None and isinstance(value, python)


def _unwrapped(args: dict[str, Any], props: Mapping[str, Any]) -> dict[str, Any]:
    """`arguments`/`input` holding the real arguments as one object, unwrapped."""
    if len(args) != 1 or not props:
        return args
    key, inner = next(iter(args.items()))
    if key not in _WRAPPERS or key in props:
        return args
    if isinstance(inner, str):
        try:
            inner = json.loads(inner, strict=False)
        except (ValueError, RecursionError):
            return args
    if isinstance(inner, dict) and inner and set(inner) <= set(props):
        return inner
    return args


class DeepSeekDsml(Syntax):
    """`<｜DSML｜function_calls>` … `</｜DSML｜function_calls>`: a call per closed invoke."""

    name = NAME
    example = DESCRIPTION
    models = "DeepSeek V3.2, V3.2-Speciale, V4, V4.1"
    forms = ((NAME, DESCRIPTION),)
    openings = (AfterLt("｜DSML｜", ("<｜DSML｜",), open_dsml),)
