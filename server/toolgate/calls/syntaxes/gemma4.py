"""Gemma 4: `call:NAME{key:value,…}` between `<|tool_call>` and `<tool_call|>`.

    <|tool_call>call:write_file{path:<|"|>a.py<|"|>,content:<|"|>x = 1
    <|"|>,overwrite:true}<tool_call|>

Strings go between `<|"|>` delimiters and are kept as written; keys are bare; numbers,
`true`, `false` and `null` are bare; objects are `{key:value,…}` and lists `[value,…]`, nested
at will. A top-level argument is also typed by the tool's schema, as the XML forms are. Read
as Gemma 4's own parsers read it: a value whose opening `<|"|>` is missing runs to its closing
one, and `<turn|>` (the end of the turn) or the output's end also ends a call, since servers
strip that stop token. Gemma 4 also drops `<|tool_call>` at times: a call right after the
thought channel's `<channel|>` is read, and so is `call:NAME{…}` at a line start when NAME is a
registered tool and nothing else follows on its line (otherwise it is prose, as every
ambiguous syntax is). Written by Gemma 4 (E2B, E4B, 26B A4B, 31B).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolgate.calls.arguments import tool_properties, typed_value
from toolgate.calls.cursor import CLOSE_JSON, WINDOW, WS, Cursor, skip, waits_for
from toolgate.calls.json_value import st_standalone
from toolgate.calls.openings import AtLineStart
from toolgate.calls.syntaxes.base import Failed, Found, Reading, Syntax, Tools

DELIM = '<|"|>'
NAME = "gemma4"
EXAMPLE = '<|tool_call>call:NAME{argument:<|"|>value<|"|>}<tool_call|>'
_NAME = re.compile(r"\s*:?\s*call:\s*([^\s{}<>]+)\s*\{")
_BARE_NAME = re.compile(r"\s*([^\s{}<>]+)\s*\{")
# `call:NAME{` at a line start, and what may still grow into one.
_LINE_CALL = re.compile(r"call:([\w.-]+)\{")
_LINE_CALL_START = re.compile(r"call:[\w.-]*")
_LINE_SCAN = re.compile(r'<\|"\|>|[{}]')
_SEPARATORS = re.compile(r"[\s,]*")
_KEY = re.compile(r"\s*([^\s:{}\[\],<>\"]+)\s*:")
_BARE_END = re.compile(r"[,}\]]")
# Inside a value whose opening `<|"|>` was left out: structure, or `, key:` (a next argument).
_NOT_ONE_STRING = re.compile(r"[{}\[\]]|,\s*[\w.-]+\s*:")
_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


class _Bad(Exception):
    """Text that is not Gemma 4's call grammar; the message says where."""


def read_call(text: str, bare: bool, tools: Tools) -> Found | Failed:
    """The call in `call:NAME{…}` (`bare`: `NAME{…}`), with nothing after its closing `}`."""
    m = (_BARE_NAME if bare else _NAME).match(text)
    if m is None:
        return _failure("expected call:NAME{…}")
    name = m.group(1)
    try:
        args, end = _object(text, m.end(), tool_properties(tools, name))
    except _Bad as exc:
        return _failure(f"the arguments of '{name}': {exc}")
    if text[end:].strip():
        return _failure(f"unexpected text after the arguments of '{name}'")
    return Found(name, args)


def _failure(message: str) -> Failed:
    return Failed(f"{NAME}: {message}; expected {EXAMPLE}")


def at_call_line(p: Cursor, s: int) -> bool | None:
    """`call:NAME{` at a line start, NAME a registered tool: the call without its token."""
    buf = p.buf
    m = _LINE_CALL.match(buf, s)
    if m is None:
        cut = _LINE_CALL_START.fullmatch(buf, s)
        if cut is not None and not p.eof and len(buf) - s < WINDOW:
            return False  # the name may still grow
        return None
    if m.group(1) not in p.tools:
        return None
    p.prose_to(s)
    k = p.start("call:NAME{…}", st_call_line)
    k.syntax, k.name, k.depth = NAME, m.group(1), 1
    return p.take(m.end()) or True


@waits_for(CLOSE_JSON)
def st_call_line(p: Cursor) -> bool:
    """To the `}` that closes the call, outside `<|"|>` strings; then its line must end."""
    k = p.k
    buf, n = p.buf, len(p.buf)
    while True:
        m = _LINE_SCAN.search(buf, p.pos)
        if m is None:
            if p.eof:
                p.take(n)
                p.error(
                    f"unclosed call:{k.name}{{: the output ended before its closing }}; "
                    f"nothing was run; expected {EXAMPLE}",
                    p.done(),
                )
                return True
            cut = buf.rfind("<", max(p.pos, n - len(DELIM) + 1))  # a delimiter cut in two
            keep = cut if cut >= 0 and DELIM.startswith(buf[cut:]) else n
            return not p.take(keep)
        if not p.take(m.end()):
            return True
        if m.group() == DELIM:
            k.in_str = not k.in_str
        elif not k.in_str:
            k.depth += 1 if m.group() == "{" else -1
            if k.depth == 0:
                k.after, k.on_value = "standalone", _resolve_line
                p.state = st_standalone
                return True


def _resolve_line(p: Cursor, text: str) -> None:
    found = read_call(text, False, p.tools)
    if isinstance(found, Failed):
        p.error(found.message, text)
    else:
        p.call(found.name, found.arguments, NAME, text)


class Gemma4(Syntax):
    """`<|tool_call>call:NAME{k:<|"|>v<|"|>}<tool_call|>`: one call per pair of tokens."""

    name = NAME
    opens = ("<|tool_call>", "<channel|>call:")
    closes = ("<tool_call|>", "<turn|>")
    ends_at_output_end = True
    openings = (AtLineStart(("call:",), at_call_line),)
    example = EXAMPLE
    models = "Gemma 4"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The name before `{`, then the arguments to the matching `}`; nothing after it."""
        return [read_call(body, opening.endswith("call:"), tools)]


def _object(
    text: str, i: int, props: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], int]:
    """The pairs from `i` (just after `{`) to the matching `}`.

    `props`: the tool's properties, for the call's own arguments (None inside a value).
    """
    out: dict[str, Any] = {}
    while True:
        i = skip(_SEPARATORS, text, i)
        if i >= len(text):
            raise _Bad("the output ended before its closing }")
        if text[i] == "}":
            return out, i + 1
        if text.startswith(DELIM, i):  # a key written as a string
            end = text.find(DELIM, i + len(DELIM))
            colon = end + len(DELIM)
            if end < 0 or not text.startswith(":", colon):
                raise _Bad(f"a key at character {i} is not closed by {DELIM}:")
            key, i = text[i + len(DELIM) : end], colon + 1
        else:
            m = _KEY.match(text, i)
            if m is None:
                raise _Bad(f"expected key:value at character {i}")
            key, i = m.group(1), m.end()
        out[key], i = _value(text, i, props, key)


def _value(
    text: str, i: int, props: Mapping[str, Any] | None = None, key: str = ""
) -> tuple[Any, int]:
    """The value at `i` and where it ends; an argument of the call is typed by `props[key]`."""
    i = skip(WS, text, i)
    if text.startswith(DELIM, i):
        end = text.find(DELIM, i + len(DELIM))
        if end < 0:
            raise _Bad(f"a string at character {i} is never closed by {DELIM}")
        raw = text[i + len(DELIM) : end]
        return _typed(raw, props, key, raw), end + len(DELIM)
    if text.startswith("{", i):
        return _object(text, i + 1)
    if text.startswith("[", i):
        return _array(text, i + 1)
    bare = _BARE_END.search(text, i)
    stop = bare.start() if bare else len(text)
    delim = text.find(DELIM, i)
    if delim >= 0 and (
        delim <= stop
        or not _NOT_ONE_STRING.search(text, i, delim)
        and not text[i:delim].rstrip().endswith(",")  # that `<|"|>` opens the next value
    ):
        # the opening `<|"|>` left out: the string runs to the closing one (Gemma 4 does this)
        raw = text[i:delim]
        return _typed(raw, props, key, raw), delim + len(DELIM)
    token = text[i:stop].strip()
    literal = _literal(token)
    if literal is None:  # a bare null is null: Gemma 4 writes a string between delimiters
        return None, stop
    return _typed(token, props, key, literal), stop


def _typed(raw: str, props: Mapping[str, Any] | None, key: str, value: Any) -> Any:
    """`value`, or `raw` typed by the argument's schema when the schema gives a type."""
    schema = props.get(key) if props is not None else None
    if isinstance(schema, Mapping) and schema.get("type"):
        return typed_value(raw, schema)
    return value


def _array(text: str, i: int) -> tuple[list[Any], int]:
    """The items from `i` (just after `[`) to the matching `]`."""
    out: list[Any] = []
    while True:
        i = skip(_SEPARATORS, text, i)
        if i >= len(text):
            raise _Bad("the output ended before a list's closing ]")
        if text[i] == "]":
            return out, i + 1
        if text[i] == "}":
            raise _Bad(f"a list closed by }} at character {i}")
        item, i = _value(text, i)
        out.append(item)


def _literal(token: str) -> Any:
    """A bare value: a number, `true`, `false`, `null`, else the text itself."""
    if token in _LITERALS:
        return _LITERALS[token]
    if _NUMBER.fullmatch(token):
        number = float(token)
        return int(token) if re.fullmatch(r"-?\d+", token) else number
    return token
