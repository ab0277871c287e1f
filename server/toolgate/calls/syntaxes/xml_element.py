"""A registered tool's name as an XML element, one child element per argument.

    <read_file>
    <path>src/app.py</path>
    </read_file>

Values are typed by the tool's schema. An element whose name is not a registered tool, or that
holds anything but argument elements, is prose. Written by models prompted in Cline's or
Roo Code's style (one element per tool, one child per parameter).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolgate.calls.arguments import EXPECTED, strip_one_newline, typed_value
from toolgate.calls.cursor import CLOSE_TAG, WINDOW, WS, Cursor, skip, waits_for
from toolgate.calls.openings import AfterLt
from toolgate.calls.syntaxes.base import Syntax

NAME = "xml_element"
DESCRIPTION = "<NAME><param>value</param>…</NAME> for a registered tool NAME"
XML_NAME = re.compile(r"[A-Za-z_][\w.-]*")
_XML_CHILD = re.compile(r"<([A-Za-z_][\w.-]*)>")


def open_element(p: Cursor, m: re.Match[str]) -> bool:
    """At `<NAME>` for a registered tool NAME (matched by `m`)."""
    k = p.start("xml element call", st_xml)
    k.syntax, k.name, k.strict = NAME, m.group()[1:-1], False
    p.take(m.end())
    k.open_len = p.acc_n
    return True


@waits_for(lambda k: None if k.child is None else CLOSE_TAG)  # a value ends at its </…>
def st_xml(p: Cursor) -> bool:
    """`<tool_name><param>value</param>…</tool_name>`: children typed by the schema."""
    k = p.k
    buf, n = p.buf, len(p.buf)
    while True:
        pos = p.pos
        if k.child is not None:
            close = f"</{k.child}>"
            i = buf.find(close, pos)
            if i < 0:
                if p.eof:
                    p.take(n)
                    return fail_xml(p, "the output ended inside <" + k.child + ">")
                lt = buf.rfind("<", max(pos, n - len(close) + 1))
                return not p.take(lt if lt >= 0 else n)
            start = k.value_start
            if not p.take(i):
                return True
            k.params.append((k.child, start, p.acc_n))
            k.child = None
            if not p.take(i + len(close)):
                return True
            continue
        ws = skip(WS, buf, pos)
        if not p.take(ws):
            return True
        close = f"</{k.name}>"
        if buf.startswith(close, ws):
            if not p.take(ws + len(close)):
                return True
            text = p.done()
            args = {
                param: typed_value(strip_one_newline(text[a:b]), p.schema_props(k.name).get(param))
                for param, a, b in k.params
            }
            p.call(k.name or "", args, "xml_element", text)
            return True
        m = _XML_CHILD.match(buf, ws)
        if m and m.group(1) != k.name:
            if not p.take(m.end()):
                return True
            k.child = m.group(1)
            k.value_start = p.acc_n
            continue
        rest = buf[ws : ws + WINDOW]
        if (
            not p.eof
            and len(rest) < WINDOW
            and (close.startswith(rest) or re.fullmatch(r"<[A-Za-z_]?[\w.-]*", rest))
        ):
            return not p.take(ws)
        if k.params:
            return fail_xml(p, f"unexpected text inside <{k.name}>")
        # Not an element with parameter children: it was prose after all.
        text = p.done()
        p.as_prose(text[: k.open_len])
        p.pushback(text[k.open_len :], ">")
        return True


def fail_xml(p: Cursor, what: str) -> bool:
    """End the element with an error: `what` went wrong."""
    k = p.k
    p.error(
        f"{what}; nothing was run; expected <{k.name}><param>value</param>…</{k.name}> "
        f"or {EXPECTED}",
        p.done(),
    )
    return True


def element_opening(tools: Sequence[str]) -> AfterLt | None:
    """`<NAME>` for each registered tool whose name is an XML name (the longest first)."""
    names = [n for n in sorted(tools, key=len, reverse=True) if XML_NAME.fullmatch(n)]
    if not names:
        return None
    pattern = "(?:" + "|".join(re.escape(n) for n in names) + ")>"
    return AfterLt(pattern, tuple(f"<{n}>" for n in names), open_element)


class XmlElement(Syntax):
    """`<NAME><param>value</param></NAME>`: it ends at its own closing element."""

    name = NAME
    example = DESCRIPTION
    models = "models prompted in Cline's or Roo Code's style"
    forms = ((NAME, DESCRIPTION),)
    openings = (element_opening,)
