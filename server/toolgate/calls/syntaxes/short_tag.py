"""The short tag, deprecated: `<tool:NAME>{JSON}`, optionally closed by `</tool>`.

    <tool:read_file>{"path": "src/app.py"}</tool>

Read unless `tool_calling.allow_deprecated_syntax` is false, when each call is an error that
names the canonical tag instead. Written by models prompted with Toolgate's earliest prompt.
"""

from __future__ import annotations

import re

from toolgate.calls.arguments import EXPECTED, BadCall, load_json
from toolgate.calls.cursor import CLOSE_JSON, WINDOW, WS, Cursor, json_scanner, skip, waits_for
from toolgate.calls.openings import AfterLt
from toolgate.calls.syntaxes.base import Syntax
from toolgate.calls.syntaxes.tag import SCAN_TAG

NAME = "short_tag"
DESCRIPTION = "<tool:NAME>{JSON} optionally closed by </tool> (deprecated)"
_SHORT_OPEN = re.compile(r"<tool:\s*([A-Za-z_][\w.-]*)\s*>")
_SCAN_SHORT = (json_scanner(None, "<tool")[0], SCAN_TAG[1])


def open_short(p: Cursor) -> bool:
    """At `<tool:`: the short tag's opening, or prose."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    gt = buf.find(">", pos, pos + WINDOW)
    if gt < 0 and n - pos < WINDOW and not p.eof:
        return False
    m = _SHORT_OPEN.match(buf, pos, gt + 1) if gt >= 0 else None
    if m is None:
        p.prose_to(pos + 1)
        return True
    k = p.start("short tag call", st_short_open)
    k.syntax, k.name = "short_tag", m.group(1)
    p.take(m.end())
    k.open_len = p.acc_n
    return True


def st_short_open(p: Cursor) -> bool:
    """After the opening: a JSON object, or no arguments."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    ws = skip(WS, buf, pos)
    k = p.k
    if ws < n and buf[ws] == "{":
        if not p.take(ws):
            return True
        k.out_re, k.in_re = _SCAN_SHORT
        k.hold, k.close = 6, None
        p.state = st_short_body
        return True
    if buf.startswith("</tool>", ws):
        p.take(ws + 7)
        text = p.done()
        p.call(k.name or "", {}, "short_tag", text, deprecated=True)
        return True
    if not p.eof and (ws >= n or "</tool>".startswith(buf[ws:])):
        return False
    text = p.done()
    p.call(k.name or "", {}, "short_tag", text, deprecated=True)
    return True


@waits_for(CLOSE_JSON)
def st_short_body(p: Cursor) -> bool:
    """The JSON object, up to its end outside strings."""
    k = p.k
    ev = p.scan_json(k)
    if ev is None:
        return False
    kind, i, _ = ev
    if kind == "cut":
        return True
    if kind == "end":
        k.value_end = p.acc_n
        p.state = st_short_after
        return True
    if kind == "nested":
        if not p.take(i):
            return True
        p.error(
            f"nested tag: a call opened inside <tool:{k.name}> before its JSON was "
            f"complete; nothing was run; expected {EXPECTED}",
            p.done(),
        )
        return True
    text = p.done()
    if k.fallback >= 0:
        p.error(
            f"broken JSON in <tool:{k.name}>: a string is never closed; expected {EXPECTED}",
            text[: k.fallback],
        )
        p.pushback(text[k.fallback :], text[k.fallback - 1])
        return True
    p.error(
        f"unclosed <tool:{k.name}>: the output ended inside its JSON; nothing was run; "
        f"expected {EXPECTED}",
        text,
    )
    return True


def st_short_after(p: Cursor) -> bool:
    """After the object: an optional `</tool>`."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    ws = skip(WS, buf, pos)
    if buf.startswith("</tool>", ws):
        if not p.take(ws + 7):
            return True
    elif not p.eof and (ws >= n or "</tool>".startswith(buf[ws:])):
        return False
    k = p.k
    text = p.done()
    try:
        args = load_json(text[k.open_len : k.value_end].strip(), k.name or "")
    except BadCall as exc:
        p.error(str(exc), text)
        return True
    p.call(k.name or "", args, "short_tag", text, deprecated=True)
    return True


class ShortTag(Syntax):
    """`<tool:NAME>{JSON}`: it ends where its JSON object ends."""

    name = NAME
    example = DESCRIPTION
    models = "models prompted with Toolgate's earliest prompt"
    forms = ((NAME, DESCRIPTION),)
    openings = (AfterLt("tool:", ("<tool:",), lambda p, m: open_short(p)),)
