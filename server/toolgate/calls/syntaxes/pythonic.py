"""Pythonic call lists: `[name(a=1, b="x"), other()]` alone on its line.

    [read_file(path="src/app.py"), list_directory(path="src")]

Read, never evaluated: each argument must be a literal. The list counts only when it is alone
on its line and its first name is a registered tool; otherwise it is prose. Written by Llama
3.2 (1B, 3B), Llama 4 (without its tags), ToolACE and Granite's pythonic fine-tunes.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from toolgate.calls.arguments import EXPECTED, BadCall, python_literal
from toolgate.calls.cursor import CLOSE_JSON, Cursor, waits_for
from toolgate.calls.json_value import st_standalone
from toolgate.calls.openings import AtLineStart
from toolgate.calls.syntaxes.base import Syntax
from toolgate.python_source import parse_python

NAME = "pythonic"
DESCRIPTION = '[name(a=1, b="x"), other()] alone on its line'
PY_PREFIX = re.compile(r"\[\s*([A-Za-z_]\w*)\s*\(")
PY_VIABLE = re.compile(r"\[\s*(?:[A-Za-z_]\w*\s*)?")
_PY_OUT = re.compile(r"[\[\](){}'\"]")
_PY_IN = {
    "'": re.compile(r"[\\'\n]"),
    '"': re.compile(r'[\\"\n]'),
    "'''": re.compile(r"\\|'''"),
    '"""': re.compile(r'\\|"""'),
}


def at_line(p: Cursor, s: int) -> bool | None:
    """At `[` at a line start (from `s`): a call list whose first name is a registered tool."""
    py = p.classify(PY_PREFIX, PY_VIABLE, s)
    if py is ...:
        return False
    if py is None or py.group(1) not in p.tools:
        return None
    p.prose_to(s)
    k = p.start("pythonic call", st_python)
    k.on_value = resolve_python
    return True


@waits_for(CLOSE_JSON)
def st_python(p: Cursor) -> bool:
    """The list, up to its closing bracket outside strings."""
    k = p.k
    buf, n = p.buf, len(p.buf)
    while True:
        pos = p.pos
        if k.quote:
            q = k.quote
            rx = _PY_IN[q]
            m = rx.search(buf, pos)
            if m is None:
                if p.eof:
                    if not p.take(n):
                        return True
                    break
                return not p.take(max(pos, n - (len(q) - 1)))
            s = m.group()
            if s == "\\":
                if m.end() >= n and not p.eof:
                    return not p.take(m.start())
                if not p.take(min(n, m.end() + 1)):
                    return True
                continue
            if s == "\n":  # a newline ends a one-line string: not Python after all
                if p.take(m.start()):
                    p.as_prose(p.done())
                return True
            k.quote = ""
            if not p.take(m.end()):
                return True
            continue
        m = _PY_OUT.search(buf, pos)
        if m is None:
            if p.eof:
                if not p.take(n):
                    return True
                break
            return not p.take(n)
        s = m.group()
        if s in "'\"":
            if m.start() + 3 > n and not p.eof:
                return not p.take(m.start())
            triple = buf.startswith(s * 3, m.start())
            k.quote = s * 3 if triple else s
            if not p.take(m.start() + len(k.quote)):
                return True
            continue
        k.depth += 1 if s in "([{" else -1
        if not p.take(m.end()):
            return True
        if k.depth <= 0:
            p.state = st_standalone
            return True
    text = p.done()
    p.error(
        "unclosed pythonic call list: the output ended before its closing ']'; nothing was "
        f"run; expected {EXPECTED}",
        text,
    )
    return True


def resolve_python(p: Cursor, text: str) -> None:
    """The calls of a list alone on its line; prose when it is not a list of calls."""
    try:
        tree = parse_python(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError) as exc:
        p.error(
            f"could not parse the pythonic call list ({exc.__class__.__name__}); "
            f"expected {EXPECTED}",
            text,
        )
        return
    body = tree.body
    if not isinstance(body, ast.List) or not all(
        isinstance(e, ast.Call) and isinstance(e.func, ast.Name) for e in body.elts
    ):
        p.as_prose(text)
        return
    for call in body.elts:
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
        name = call.func.id
        try:
            if call.args:
                raise BadCall(
                    f"pythonic call to '{name}' has positional arguments; "
                    "write name=value for each argument"
                )
            args: dict[str, Any] = {}
            for kw in call.keywords:
                if kw.arg is None:
                    raise BadCall(f"pythonic call to '{name}' uses **; write name=value")
                args[kw.arg] = python_literal(kw.value, name, kw.arg)
        except BadCall as exc:
            p.error(str(exc), text)
            continue
        p.call(name, args, "pythonic", text)


class Pythonic(Syntax):
    """`[name(a=1), other()]` alone on its line: it ends at its closing bracket."""

    name = NAME
    example = DESCRIPTION
    models = "Llama 3.2 (1B, 3B), Llama 4, ToolACE"
    forms = ((NAME, DESCRIPTION),)
    openings = (AtLineStart(("[",), at_line),)
