"""Reading a syntax that opens with a literal: hold the construct until its end, then `read` it.

The end is the first of the syntax's closing literals, or, for a syntax without any, the end of
the JSON value after the opening (strings and escapes respected). The body between is handed
to `Syntax.read`; its calls, errors or prose are emitted in order. A syntax from outside that
raises is an error the model reads, never a crash.
"""

from __future__ import annotations

import re

from toolgate.calls.arguments import BadCall, load_json
from toolgate.calls.cursor import WS, Construct, Cursor, skip, st_opt_close
from toolgate.calls.syntaxes.base import Failed, Prose, Syntax

_IN_STRING = re.compile(r'["\\]')
_OUT_STRING = re.compile(r'[\[\]{}"]')


def enter(p: Cursor, k: Construct, syntax: Syntax, opening: str, *, taken: bool) -> None:
    """Read the construct `k` with `syntax` from here on (`taken`: its opening is read)."""
    k.syntax, k.impl, k.opening = syntax.name, syntax, opening
    if syntax.closes:
        ends = sorted(syntax.closes, key=len, reverse=True)
        k.cand_re = re.compile("|".join(re.escape(c) for c in ends))
        k.hold = max(len(c) for c in ends) - 1
    else:
        k.cand_re = None
        p.state = st_delimited_value
    k.open_len = p.acc_n + (0 if taken else len(opening))


def st_delimited(p: Cursor) -> bool:
    """Hold the construct until one of its closing literals arrives."""
    k = p.k
    if k.cand_re is None:
        p.state = st_delimited_value
        return True
    buf, pos, n = p.buf, p.pos, len(p.buf)
    m = k.cand_re.search(buf, pos)
    if m is None:
        if not p.eof:
            # the end may hold the start of a closing literal: keep it in the buffer
            return not p.take(max(pos, n - k.hold))
        if not p.take(n):
            return True
        text = p.done()
        assert k.impl is not None
        if k.impl.ends_at_output_end:
            resolve_delimited(p, k, text[k.open_len :], text)
        else:
            p.error(
                f"unclosed {k.opening}: the output ended before {k.impl.closes[0]}; "
                f"nothing was run; expected {k.impl.example}",
                text,
            )
        return True
    if not p.take(m.end()):
        return True
    text = p.done()
    resolve_delimited(p, k, text[k.open_len : len(text) - len(m.group())], text)
    return True


def st_delimited_value(p: Cursor) -> bool:
    """Hold the construct until the JSON value after its opening ends."""
    k = p.k
    assert k.impl is not None
    buf, n = p.buf, len(p.buf)
    if not k.decided:
        ws = skip(WS, buf, p.pos)
        if ws >= n and not p.eof:
            return not p.take(ws)
        if ws >= n or buf[ws] not in "[{":
            p.take(ws)
            p.error(
                f"{k.impl.name}: expected a JSON list or object after {k.opening}; "
                f"nothing was run; expected {k.impl.example}",
                p.done(),
            )
            return True
        k.decided = True
    i = p.pos
    while True:
        if k.in_str:
            m = _IN_STRING.search(buf, i)
            if m is None:
                break
            if m.group() == "\\":
                if m.end() >= n and not p.eof:
                    return not p.take(m.start())  # an escape cut in two
                i = m.end() + 1
                continue
            k.in_str = False
            i = m.end()
            continue
        m = _OUT_STRING.search(buf, i)
        if m is None:
            break
        c, i = m.group(), m.end()
        if c == '"':
            k.in_str = True
        elif c in "[{":
            k.depth += 1
        else:
            k.depth -= 1
            if k.depth <= 0:
                if not p.take(i):
                    return True
                text = p.construct_text()
                if k.impl.trailer:
                    k.after = k.impl.trailer
                    p.state = st_opt_close
                else:
                    p.done()
                resolve_delimited(p, k, text[k.open_len :], text)
                return True
    if not p.take(n):
        return True
    if p.eof:
        p.error(
            f"unclosed {k.opening}: the output ended inside its JSON; nothing was run",
            p.done(),
        )
        return True
    return False


def resolve_delimited(p: Cursor, k: Construct, body: str, text: str) -> None:
    """Hand the construct's body to its syntax; emit its calls, errors or prose."""
    syntax: Syntax = k.impl
    assert syntax is not None
    try:
        reading = syntax.read(k.opening, body, p.tools)
    except Exception as exc:  # a syntax from outside must never crash the parser
        p.error(f"{syntax.name}: could not read the call ({exc!r})", text)
        return
    if isinstance(reading, Prose):
        p.as_prose(reading.text)
        return
    for item in reading:
        if isinstance(item, Failed):
            p.error(item.message, text)
            continue
        args = item.arguments
        if isinstance(args, str) and args.strip():
            try:
                args = load_json(args, item.name, syntax.example)
            except BadCall as exc:
                p.error(f"{syntax.name}: {exc}", text)
                continue
        p.call(item.name, args, syntax.name, text)
