"""Mistral: `[TOOL_CALLS]` and a JSON list of calls, or (v11 tokenizer) NAME and its arguments.

    [TOOL_CALLS][{"name": "read_file", "arguments": {"path": "src/app.py"}}]
    [TOOL_CALLS]read_file[ARGS]{"path": "src/app.py"}

`[ARGS]` is left out by Mistral's v11 tokenizer in Devstral, Mistral Small 3.2 and Magistral:
`[TOOL_CALLS]read_file{"path": "src/app.py"}` is read too. Written by Mistral 7B Instruct
v0.3, Mistral Nemo, Mistral Small, Codestral, Devstral, Magistral.
"""

from __future__ import annotations

import re

from toolgate.calls.arguments import EXPECTED, BadCall, load_json
from toolgate.calls.cursor import WINDOW, WS, Cursor, fail, skip
from toolgate.calls.json_value import st_json
from toolgate.calls.openings import InProse
from toolgate.calls.syntaxes.base import Syntax

NAME = "mistral"
DESCRIPTION = '[TOOL_CALLS][{"name": …, "arguments": …}, …]'
V11 = "mistral_v11"
V11_DESCRIPTION = "[TOOL_CALLS]NAME[ARGS]{JSON}"
MARKER = "[TOOL_CALLS]"
# `[ARGS]` is left out by Mistral's v11 tokenizer in Devstral, Mistral Small 3.2, Magistral
_MISTRAL_V11 = re.compile(r"([A-Za-z_][\w.-]*)(?:\[CALL_ID\][^\[\]\s]*)?(?:\[ARGS\])?\s*")


def open_mistral(p: Cursor) -> bool:
    """At `[TOOL_CALLS]` in prose: always the start of a call."""
    k = p.start(MARKER, st_mistral_open)
    k.expected = '[TOOL_CALLS][{"name": "NAME", "arguments": {…}}] or ' + EXPECTED
    k.syntax = "mistral"
    p.take(p.pos + len("[TOOL_CALLS]"))
    return True


def st_mistral_open(p: Cursor) -> bool:
    """After the marker: a JSON list or object, or NAME[ARGS]{…}."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    ws = skip(WS, buf, pos)
    if ws >= n and not p.eof:
        return False
    if ws < n and buf[ws] in "[{":
        if not p.take(ws):
            return True
        p.k.after = "list"
        p.state = st_json
        return True
    # [TOOL_CALLS]NAME[ARGS]{…}: decide once a "{" or a line end is in view
    seg = buf[ws : ws + WINDOW]
    stop = min((x for x in (seg.find("{"), seg.find("\n")) if x >= 0), default=-1)
    if stop < 0 and len(seg) < WINDOW and not p.eof:
        return False
    m = _MISTRAL_V11.fullmatch(seg, 0, stop) if stop >= 0 else None
    if m is None or seg[stop] != "{":
        if not p.take(ws):
            return True
        fail(
            p,
            "after [TOOL_CALLS] expected a JSON list "
            '[{"name": …, "arguments": {…}}] or NAME[ARGS]{…}',
        )
        return True
    k = p.k
    k.name, k.syntax, k.after = m.group(1), V11, "args"
    k.on_value = read_v11_arguments
    p.take(ws + stop)
    k.value_start = p.acc_n
    p.state = st_json
    return True


def read_v11_arguments(p: Cursor, text: str) -> None:
    """`[TOOL_CALLS]NAME[ARGS]{…}`: the object is the arguments of NAME."""
    k = p.k
    try:
        arguments = load_json(text[k.value_start : k.value_end], k.name or k.what)
    except BadCall as exc:
        p.error(str(exc), text)
        return
    p.call(k.name or "", arguments, V11, text)


class Mistral(Syntax):
    """`[TOOL_CALLS]` and a JSON list, or NAME[ARGS]{…}: it ends with its JSON value."""

    name = NAME
    example = DESCRIPTION
    models = "Mistral 7B Instruct v0.3, Mistral Nemo, Mistral Small, Devstral"
    forms = ((NAME, DESCRIPTION), (V11, V11_DESCRIPTION))
    openings = (InProse(MARKER, open_mistral),)
