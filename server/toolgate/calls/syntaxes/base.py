"""The interface every delimited syntax implements, and the helpers they share.

A delimited syntax opens with a literal (`<|tool_calls_section_begin|>`, `<tool_calls>`, …) and
ends with another, or where the JSON value after its opening ends. The streaming driver finds
the opening in prose, holds the text until the end arrives, and hands the text between to
`Syntax.read`, which turns it into calls, a precise error, or prose (when the construct turns
out not to be a call at all). The driver does the rest: registered names, empty arguments,
the size cap, excerpts, and chunk invariance.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from toolgate.calls.arguments import BadCall, load_json, name_and_arguments, python_literal
from toolgate.calls.openings import ForTools, Opening
from toolgate.python_source import parse_python

Tools = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Found:
    """A call a syntax read: the tool's name and its arguments (an object, or JSON text)."""

    name: str
    arguments: Any


@dataclass(frozen=True)
class Failed:
    """One call of a construct that cannot be run; `message` says what is wrong and where."""

    message: str


@dataclass(frozen=True)
class Prose:
    """The construct is not a call: `text` is shown as prose in its place."""

    text: str


Reading = list[Found | Failed] | Prose


class Syntax:
    """One tool-call syntax that opens with a literal. Subclass it and register the class.

    `opens`: literals that open the syntax in prose; each starts with `<`.
    `closes`: literals that end it (the first one found ends it); empty when the body is one
    JSON value, which then ends the construct, optionally followed by `trailer`.
    `ends_at_output_end`: the output's end also ends it (for formats whose closing token is a
    stop token that servers strip).

    A syntax whose end depends on its content has no `opens`: it lists `openings` instead
    (`toolgate.calls.openings`), whose readers read the stream with their own states, and
    `forms`, the names its calls are recorded under with the shape of each.
    """

    name: ClassVar[str]
    opens: ClassVar[tuple[str, ...]] = ()
    openings: ClassVar[tuple[Opening | ForTools, ...]] = ()
    forms: ClassVar[tuple[tuple[str, str], ...]] = ()
    closes: ClassVar[tuple[str, ...]] = ()
    trailer: ClassVar[str] = ""
    ends_at_output_end: ClassVar[bool] = False
    example: ClassVar[str]
    models: ClassVar[str]

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """Turn the text between the opening and the end into calls, errors or prose."""
        raise NotImplementedError

    def failure(self, message: str) -> Failed:
        """An error naming this syntax and showing its expected shape."""
        return Failed(f"{self.name}: {message}; expected {self.example}")


def json_calls(syntax: Syntax, text: str, where: str) -> list[Found | Failed]:
    """Calls in a JSON object or list of `{"name": …, "arguments"|"parameters": …}`."""
    try:
        value = load_json(text.strip(), where)
    except BadCall as exc:
        return [syntax.failure(str(exc))]
    items = value if isinstance(value, list) else [value]
    if not items:
        return [syntax.failure(f"an empty call list in {where}")]
    out: list[Found | Failed] = []
    for item in items:
        try:
            name, args = name_and_arguments(item, where)
        except BadCall as exc:
            out.append(syntax.failure(str(exc)))
            continue
        out.append(Found(name, args))
    return out


def pythonic_calls(syntax: Syntax, text: str) -> list[Found | Failed]:
    """Calls written as Python: `[f(a=1), g()]`, or `f(a=1)` lines; read, never evaluated."""
    text = _escape_in_strings(text.strip())
    # SystemError too: Python 3.11's parser can fail so when threads parse at once.
    try:
        tree = parse_python(text if text.startswith("[") else f"[{text}]", mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError) as exc:
        # one call per line is a list without commas; `month=07` is a number, as models mean it
        lines = ", ".join(line for line in text.splitlines() if line.strip())
        unzeroed = _ZEROS_OUTSIDE_STRINGS.sub(lambda m: m.group(1) or "", text)
        wrapped = unzeroed if unzeroed.startswith("[") else f"[{unzeroed}]"
        for candidate in dict.fromkeys((f"[{lines}]", wrapped)):
            try:
                tree = parse_python(candidate, mode="eval")
                break
            except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
                continue
        else:
            return [syntax.failure(f"the calls are not Python ({exc.__class__.__name__})")]
    if not isinstance(tree.body, ast.List):
        return [syntax.failure("expected a list of calls")]
    out: list[Found | Failed] = []
    for node in tree.body.elts:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name | ast.Attribute):
            out.append(syntax.failure("expected NAME(argument=value, …)"))
            continue
        name = ast.unparse(node.func)
        try:
            if node.args:
                raise BadCall(f"the call to '{name}' has positional arguments; write name=value")
            args: dict[str, Any] = {}
            for kw in node.keywords:
                if kw.arg is None:
                    raise BadCall(f"the call to '{name}' uses **; write name=value")
                value = kw.value
                if isinstance(value, ast.Set):  # JSON has no sets: keep the written order
                    value = ast.List(elts=value.elts, ctx=ast.Load())
                args[kw.arg] = python_literal(value, name, kw.arg)
        except BadCall as exc:
            out.append(syntax.failure(str(exc)))
            continue
        out.append(Found(name, args))
    return out


# A quoted string (kept), or the leading zeros of a number outside one (dropped).
_ZEROS_OUTSIDE_STRINGS = re.compile(r"""('(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")|(?<![\w.])0+(?=\d)""")


def _escape_in_strings(text: str) -> str:
    """Escape raw newlines and NUL characters inside quoted strings, as models write them."""
    if "\x00" not in text and "\n" not in text:
        return text
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                out.append(text[i : i + 2])
                i += 2
                continue
            if c == quote:
                quote = ""
            elif c == "\n":
                c = "\\n"
            elif c == "\x00":
                c = "\\x00"
        elif c in "'\"":
            quote = c
        out.append(c)
        i += 1
    return "".join(out)


def strip_namespace(name: str) -> str:
    """`functions.read_file:0` → `read_file` (the namespaces and indexes models add)."""
    name = name.strip()
    if name.startswith("functions."):
        name = name[len("functions.") :]
    head, sep, tail = name.rpartition(":")
    return head if sep and tail.isdigit() else name
