"""A call written into an answer's words: read whole, cut short, or naming a tool that is not there.

The parser reads complete calls to registered tools, and says what is wrong with a delimited
call it cannot read (`<tool_call>` with nothing after it). An answer can be a call in other
shapes that it rightly leaves as prose when calls are expected in text, because they run
nothing there either:

- a JSON object with `name` and `arguments` (or `parameters`) naming a tool that does not
  exist, as Qwen2.5's own template writes it (`{"name": "run_greet", "arguments": {…}}`), or one
  cut short by the token limit; several such objects one after another (Ollama's `/v1`);
- `functions.NAME:`, the opening llama-cpp-python's `chatml-function-calling` stops after;
- `NAME(` for a registered tool, at the very start of the answer, whole or cut short.

`written_call` finds the first of these in an answer so that a run never takes one for the
person's final answer (see `toolgate.agent.text_in_native`).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolgate.calls.arguments import unknown_tool
from toolgate.calls.parser import StreamingCallParser
from toolgate.calls.records import CallParseError, ParsedCall, excerpt


@dataclass(frozen=True)
class WrittenCall:
    """A call the model wrote as text.

    `name`: the tool it names, when one can be read. `problem`: why it could not run even as
    text (an unknown tool, cut short, unreadable), or None when the text protocol reads it
    whole and only the channel was wrong.
    """

    name: str | None
    excerpt: str
    problem: str | None


# A JSON call object at a line start: its first key is one a call object begins with.
_JSON_START = re.compile(
    r'(?m)^[ \t]*(?:\[\s*)?\{\s*"(?:name|arguments|parameters|function|type)"\s*:'
)
_JSON_NAME = re.compile(r'"name"\s*:\s*"([^"\\\r\n]{1,200})"')
# Between the JSON calls of one answer: blanks, or the `;` and `,` some servers put there.
_BETWEEN = re.compile(r"[\s;,]*")
_CLOSERS = re.compile(r"[\s}\]]*")
# `functions.NAME:` ends its line or opens the arguments: `functions.py: helpers` is prose.
_NAMESPACED = re.compile(
    r"(?m)^[ \t]*functions\.([A-Za-z_][\w-]*)(?::\d+)?[ \t]*(?::[ \t]*(?=[{\[]|$)|\(|$)"
)
_FENCE = re.compile(r"[ \t]*(?:`{3,}|~{3,})[^\n]*")
_OPENED = re.compile(r"\[?\s*([A-Za-z_][\w-]*)\s*\(")
_ARGUMENT_START = re.compile(r"\s*(?:\)|[A-Za-z_]\w*\s*=|[\"'{\[]|\Z)")


def written_call(text: str, parser: StreamingCallParser) -> WrittenCall | None:
    """The first call written in `text`, or None when the answer holds none.

    `parser` is a fresh parser for the run's tools (the run's syntaxes and settings); what it
    reads or finds wrong comes first, then the shapes it leaves as prose.
    """
    items = parser.feed(text) + parser.finish()
    for item in items:
        if isinstance(item, ParsedCall):
            return WrittenCall(item.name, item.raw_excerpt, None)
    for item in items:
        if isinstance(item, CallParseError):
            return WrittenCall(None, item.raw_excerpt, item.error)
    if "&#34;" in text or "&quot;" in text:
        text = html.unescape(text)  # small models write JSON's quotes HTML-escaped, too
    body = _unfenced(text)
    tools = parser.tools
    return _json_call(body, tools) or _namespaced(body, tools) or _opened(body, tools)


def _unfenced(text: str) -> str:
    """The answer without a code fence around it (or at its end): small models fence calls."""
    lines = text.strip().splitlines()
    if lines and _FENCE.fullmatch(lines[-1]):
        lines.pop()
    if lines and _FENCE.fullmatch(lines[0]):
        lines.pop(0)
    return "\n".join(lines).strip()


def _json_call(body: str, tools: Mapping[str, Any]) -> WrittenCall | None:
    """JSON call objects from a line start to the end of the answer."""
    for start in _JSON_START.finditer(body):
        rest = body[start.start() :].strip()
        values, cut = _json_values(rest)
        if values is None:
            continue  # prose follows the JSON: an example in an answer, not a call
        calls = [c for v in values if (c := _call_object(v)) is not None]
        if len(calls) < len(values):
            continue  # some other JSON that happens to have a `name`
        name: str | None
        if calls:
            name, has_arguments = calls[0]
            if not has_arguments and name not in tools:
                continue  # `{"name": "Ada"}`: data, not a call
        else:
            found = _JSON_NAME.search(rest[:300])
            name = found.group(1) if found else None
        if name is not None and name not in tools:
            problem: str | None = unknown_tool(name, tools)
        elif cut:
            problem = "the call is cut short or is not valid JSON, so it could not be read"
        else:
            problem = None
        return WrittenCall(name, excerpt(rest), problem)
    return None


def _json_values(text: str) -> tuple[list[Any] | None, bool]:
    """The JSON values `text` holds one after another, and whether the last one is cut short.

    None when something other than JSON follows a whole value (extra closing brackets, which
    small models write, excepted).
    """
    decoder = json.JSONDecoder(strict=False)
    values: list[Any] = []
    pos = 0
    while True:
        between = _BETWEEN.match(text, pos)
        assert between is not None  # it matches the empty text
        pos = between.end()
        if pos == len(text):
            return values, False
        if text[pos] not in "{[":
            if values and _CLOSERS.fullmatch(text, pos):
                return values, False
            return None, False
        try:
            value, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return values, True
        values.extend(value if isinstance(value, list) else [value])


def _call_object(value: Any) -> tuple[str, bool] | None:
    """A call object's name and whether it carries arguments; None when it is not a call."""
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]  # OpenAI's own shape: {"type": "function", "function": {…}}
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    return value["name"], any(key in value for key in ("arguments", "parameters", "args"))


def _namespaced(body: str, tools: Mapping[str, Any]) -> WrittenCall | None:
    """`functions.NAME:` at a line start, with or without arguments after it."""
    found = _NAMESPACED.search(body)
    if found is None:
        return None
    name = found.group(1)
    rest = body[found.end() :].strip()
    if name not in tools:
        problem: str | None = unknown_tool(name, tools)
    elif not rest:
        problem = f"the call to '{name}' ends before its arguments"
    else:
        problem = None
    return WrittenCall(name, excerpt(body[found.start() :].strip()), problem)


def _opened(body: str, tools: Mapping[str, Any]) -> WrittenCall | None:
    """`NAME(` of a registered tool opening the answer: a call, whole or cut short."""
    found = _OPENED.match(body)
    if found is None or found.group(1) not in tools:
        return None
    if not _ARGUMENT_START.match(body, found.end()):
        return None
    name = found.group(1)
    closed = _closes(body, found.end())
    problem = None if closed else f"the call to '{name}' is cut short before its ')'"
    return WrittenCall(name, excerpt(body), problem)


def _closes(text: str, pos: int) -> bool:
    """Whether the parenthesis opened just before `pos` is closed (strings skipped)."""
    depth, quote, escaped = 1, "", False
    for c in text[pos:]:
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return True
    return False
