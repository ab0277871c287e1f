"""A JSON value after an opening (Mistral, Llama's JSON, Phi-4-mini), optionally alone on its line.

The value is scanned string-aware to its end. A syntax that may be mistaken for prose (a JSON
object at a line start) counts only when nothing else shares its line and the value looks like
calls to registered tools; otherwise the text is prose, shown as written.
"""

from __future__ import annotations

import re

from toolgate.calls.arguments import BadCall, load_json, looks_like_calls, name_and_arguments
from toolgate.calls.cursor import (
    CLOSE_JSON,
    Cursor,
    waits_for,
)

# A JSON call object's opening, and what may still grow into one (for early decisions).
CALL_PREFIX = re.compile(r'\s*(\[\s*)?\{\s*"name"\s*:\s*"([^"\\\r\n]{1,200})"')
CALL_VIABLE = re.compile(
    r'\s*(?:\[\s*)?(?:\{\s*(?:"(?:n(?:a(?:m(?:e(?:"\s*(?::\s*(?:"[^"\\\r\n]{0,200})?)?)?)?)?)?)?)?)?'
)
# Other text on the line makes a line-start call prose.
CLOSE_LINE_OR_TAG = re.compile(r"[>}\]=\n]|^[`~]|``|~~")


@waits_for(CLOSE_JSON)
def st_json(p: Cursor) -> bool:
    """The JSON value, up to its end outside strings."""
    k = p.k
    if k.depth == 0 and not k.value_start:
        k.value_start = p.acc_n
    ev = p.scan_json(k)
    if ev is None:
        return False
    kind = ev[0]
    if kind == "cut":
        return True
    if kind == "end":
        k.value_end = p.acc_n
        if k.after == "standalone":
            p.state = st_standalone
        else:
            (k.on_value or resolve_json)(p, p.done())
        return True
    text = p.done()
    p.error(
        f"unclosed {k.what}: the output ended inside its JSON; nothing was run; "
        f"expected {k.expected}",
        text,
    )
    return True


@waits_for(CLOSE_LINE_OR_TAG)
def st_standalone(p: Cursor) -> bool:
    """A call in an ambiguous syntax counts only when nothing else shares its line."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    i = pos
    while i < n and buf[i] in " \t\r":
        i += 1
    if i >= n and not p.eof:
        return False
    k = p.k
    if i < n and buf[i] != "\n":
        p.as_prose(p.done())
        return True
    end = i - 1 if i > pos and buf[i - 1] == "\r" and i < n else i
    if not p.take(end):
        return True
    text = p.done()
    (k.on_value or resolve_json)(p, text)
    return True


def resolve_json(p: Cursor, text: str) -> None:
    """The calls in the value: a call object or a list of them; prose if it is not calls."""
    k = p.k
    value = text[k.value_start : k.value_end]
    try:
        obj = load_json(value, k.name or k.what)
    except BadCall as exc:
        p.error(str(exc), text)
        return
    items = obj if isinstance(obj, list) else [obj]
    if not items:
        p.error(f"empty call list in {k.what}; expected {k.expected}", text)
        return
    if not k.strict and not looks_like_calls(items, p.tools):
        p.as_prose(text)
        return
    for item in items:
        try:
            name, args = name_and_arguments(item, k.what)
        except BadCall as exc:
            p.error(str(exc), text)
            continue
        p.call(name, args, k.syntax, text)
