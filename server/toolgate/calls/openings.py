"""Where a syntax whose end depends on its content may open, and what reads it from there.

Such a syntax (a `Syntax` with `opens = ()`, see `syntaxes/base.py`) lists its `openings`; the
streaming driver builds its prose pattern and its three points of dispatch from them, in the
order the syntaxes are registered (the first that takes an opening wins):

- `AfterLt`: a `<` in prose followed by `pattern` (`<tool_call>`, `<function=`, …);
- `AtLineStart`: one of `literals` at a line start, after blanks (`>>>`, `{`, `functools[`);
- `AtFence`: a fence's opening line (its language, the line after it);
- `InProse`: `literal` anywhere in prose (`[TOOL_CALLS]`).

A reader is called with the cursor at the opening (at the line's start for `AtLineStart`, which
also gets where the literal starts). It returns True once it decided (a construct was started
or prose passed), False when it needs more text, and None (line starts and fences only) when the
text is not its own, so the next syntax, or prose, takes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the cursor's syntaxes import this module
    from toolgate.calls.cursor import Cursor


@dataclass(frozen=True)
class AfterLt:
    """An opening after `<`: `pattern` is a regex of what follows it (no named groups)."""

    pattern: str
    # The fixed start of the opening, `<` included: held back when a chunk ends inside it.
    literals: tuple[str, ...]
    read: Callable[[Cursor, re.Match[str]], bool]  # the match starts at the `<`
    # What already makes the driver look closer at a `<`, when shorter than `pattern`: a name
    # that starts so is held back while a chunk's end cuts it.
    stop: str = ""


@dataclass(frozen=True)
class AtLineStart:
    """An opening at a line start, after blanks: one of `literals`.

    `holds_line`: the syntax decides only once the line ends (an arrow line), so a chunk that
    ends inside such a line is stored until then.
    """

    literals: tuple[str, ...]
    read: Callable[[Cursor, int], bool | None]  # where the literal starts
    holds_line: bool = False


@dataclass(frozen=True)
class AtFence:
    """A fence that may hold calls.

    `read` gets the fence's run, its line feed (-1: none within the look-ahead) and its
    language, and opens the fence as its construct.
    """

    read: Callable[[Cursor, re.Match[str], int, str], bool | None]


@dataclass(frozen=True)
class InProse:
    """An opening anywhere in prose: `literal`, which starts with neither `<` nor a backtick."""

    literal: str
    read: Callable[[Cursor], bool]


Opening = AfterLt | AtLineStart | AtFence | InProse
# An opening that depends on the registered tools' names (a tool's name as an element).
ForTools = Callable[[Sequence[str]], "Opening | None"]
