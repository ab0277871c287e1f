"""Qwen3-Coder's XML: `<function=NAME>` with one `<parameter=P>` element per argument.

    <tool_call>
    <function=read_file>
    <parameter=path>
    src/app.py
    </parameter>
    </function>
    </tool_call>

Values are typed by the tool's schema (a number, a boolean, JSON for arrays and objects); the
`<tool_call>` wrapper is optional, and `</parameter>` may be left out before the next element.
`<function=NAME>{JSON}</function>` is Functionary's form, handed to its reader. Written by
Qwen3-Coder, and by models prompted in OpenHands' style.
"""

from __future__ import annotations

import re

from toolgate.calls.arguments import strip_one_newline, typed_value
from toolgate.calls.cursor import (
    CLOSE_TAG,
    WINDOW,
    WS,
    Cursor,
    fail,
    skip,
    st_opt_close,
    waits_for,
)
from toolgate.calls.delimited import enter, st_delimited
from toolgate.calls.openings import AfterLt
from toolgate.calls.syntaxes.base import Syntax

NAME = "qwen_xml"
DESCRIPTION = "<function=NAME><parameter=P>value</parameter></function> (Qwen3-Coder)"
_FUNCTION_OPEN = re.compile(r"<function=\s*([^<>\s]+)\s*>")
_PARAMETER_OPEN = re.compile(r"<parameter=\s*([^<>\s]+)\s*>")
_QWEN_VALUE_END = re.compile(r"</parameter>|<parameter=|</function>")


def open_function(p: Cursor, *, wrapped: bool) -> bool:
    """At `<function=` (`wrapped`: inside `<tool_call>`): the opening, or an error."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    gt = buf.find(">", pos, pos + WINDOW)
    if gt < 0 and n - pos < WINDOW and not p.eof:
        return False
    m = _FUNCTION_OPEN.match(buf, pos, gt + 1) if gt >= 0 else None
    if not wrapped:
        k = p.start("qwen xml call", st_qwen)
    else:
        k = p.k
        p.state = st_qwen
    k.syntax, k.wrapped = NAME, wrapped
    if m is None:
        p.take(pos + len("<function="))
        fail(
            p,
            "malformed <function=NAME> opening; expected "
            "<function=NAME><parameter=P>value</parameter></function>",
            skip_to="</function>",
        )
        return True
    k.name = m.group(1)
    p.take(m.end())
    return True


@waits_for(CLOSE_TAG)
def st_qwen(p: Cursor) -> bool:
    """`<function=NAME><parameter=P>value</parameter>…</function>`."""
    k = p.k
    buf, n = p.buf, len(p.buf)
    while True:
        pos = p.pos
        if k.child is not None:
            m = _QWEN_VALUE_END.search(buf, pos)
            if m is None:
                if p.eof:
                    p.take(n)
                    return fail_qwen(p, "the output ended inside <parameter=" + k.child)
                lt = buf.rfind("<", max(pos, n - 11))
                return not p.take(lt if lt >= 0 else n)
            start = k.value_start
            if not p.take(m.start()):
                return True
            k.params.append((k.child, start, p.acc_n))
            k.child = None
            if m.group() == "</parameter>" and not p.take(m.end()):
                return True
            continue
        ws = skip(WS, buf, pos)
        if not p.take(ws):
            return True
        if buf.startswith("</function>", ws):
            if not p.take(ws + 11):
                return True
            text = p.construct_text()
            props = p.schema_props(k.name)
            args = {
                param: typed_value(strip_one_newline(text[a:b]), props.get(param))
                for param, a, b in k.params
            }
            name = k.name or ""
            if k.wrapped:
                p.state = st_opt_close
                k.after = "</tool_call>"
                p.call(name, args, "qwen_xml", text)
            else:
                p.done()
                p.call(name, args, "qwen_xml", text)
            return True
        m = _PARAMETER_OPEN.match(buf, ws)
        if m:
            if not p.take(m.end()):
                return True
            k.child = m.group(1)
            k.value_start = p.acc_n
            continue
        rest = buf[ws : ws + WINDOW]
        if (
            not p.eof
            and len(rest) < WINDOW
            and (
                "</function>".startswith(rest)
                or (rest.startswith("<parameter=") and ">" not in rest)
                or "<parameter=".startswith(rest)
            )
        ):
            return not p.take(ws)
        if p.eof and ws >= n:
            return fail_qwen(p, "the output ended before </function>")
        functionary = p.syntaxes.get("functionary")
        if buf.startswith("{", ws) and not k.params and not k.wrapped and functionary:
            # `<function=NAME>{JSON}</function>`: Functionary's form, read by its syntax
            enter(p, k, functionary, f"<function={k.name}>", taken=True)
            p.state = st_delimited
            return True
        fail(
            p,
            f"unexpected text inside <function={k.name}>; expected "
            "<parameter=NAME>value</parameter> or </function>",
            skip_to="</function>",
        )
        return True


def fail_qwen(p: Cursor, what: str) -> bool:
    """End the call with an error: `what` went wrong."""
    k = p.k
    p.error(
        f"{what}; nothing was run; expected <function={k.name}>"
        "<parameter=P>value</parameter></function>",
        p.done(),
    )
    return True


class QwenXml(Syntax):
    """`<function=NAME><parameter=P>…</function>`: each element ends the one before."""

    name = NAME
    example = DESCRIPTION
    models = "Qwen3-Coder"
    forms = ((NAME, DESCRIPTION),)
    openings = (
        AfterLt("function=", ("<function=",), lambda p, m: open_function(p, wrapped=False)),
    )
