"""Phi-4-mini: `functools[` and a JSON list of calls, alone on its line.

    functools[{"name": "read_file", "arguments": {"path": "src/app.py"}}]

Written by Phi-4-mini-instruct.
"""

from __future__ import annotations

from toolgate.calls.arguments import EXPECTED
from toolgate.calls.cursor import Cursor
from toolgate.calls.json_value import st_json
from toolgate.calls.openings import AtLineStart
from toolgate.calls.syntaxes.base import Syntax

NAME = "phi4_mini"
DESCRIPTION = 'functools[{"name": …, "arguments": …}, …] alone on its line (Phi-4-mini)'
FUNCTOOLS = "functools"


def open_functools(p: Cursor, s: int) -> bool:
    """At `functools[` at a line start (from `s`)."""
    p.prose_to(s)
    k = p.start("phi4 mini call", st_json)
    k.expected = 'functools[{"name": "NAME", "arguments": {…}}] or ' + EXPECTED
    k.syntax, k.after, k.strict = NAME, "standalone", False
    if not p.take(s + len(FUNCTOOLS)):
        return True
    k.value_start = p.acc_n
    return True


class Phi4Mini(Syntax):
    """`functools[…]` alone on its line: it ends with its JSON list."""

    name = NAME
    example = DESCRIPTION
    models = "Phi-4-mini-instruct"
    forms = ((NAME, DESCRIPTION),)
    openings = (AtLineStart((FUNCTOOLS + "[",), open_functools),)
