"""Fenced JSON: a ```` ```json ````, ```` ```tool ```` or ```` ```tool_call ```` fence of calls.

    ```tool_call
    {"name": "read_file", "arguments": {"path": "src/app.py"}}
    ```

A ```` ```json ```` fence is a call only when its body starts as a call object naming a
registered tool and every item is one; otherwise it is prose, as most JSON fences are. A fence
showing another syntax is an example, never run. ```` ```tool ```` also holds Continue's
`TOOL_NAME:` blocks (`continue_tool`). Written by models that wrap their JSON calls in a
Markdown fence, as small models often do.
"""

from __future__ import annotations

import re

from toolgate.calls.arguments import BadCall, load_json, looks_like_calls, name_and_arguments
from toolgate.calls.cursor import WINDOW, Construct, Cursor
from toolgate.calls.json_value import CALL_PREFIX, CALL_VIABLE
from toolgate.calls.openings import AtFence
from toolgate.calls.prose import open_fence, st_fence, unclosed_fence
from toolgate.calls.syntaxes.base import Failed, Syntax
from toolgate.calls.syntaxes.continue_tool import is_continue_block, read_continue_block

NAME = "fenced_json"
DESCRIPTION = '```json / ```tool / ```tool_call fence holding {"name": …, "arguments": …}'
LANGS = {"json", "tool", "tool_call"}
_STRICT_FENCE_LANGS = {"tool", "tool_call"}
_OTHER_CALL_SYNTAX = re.compile(r"<tool[\s:>]|<tool_call>|<function=|\[TOOL_CALLS\]")


def decide_call_fence(p: Cursor, k: Construct) -> bool:
    """A ```json fence is held back only while its body may still be a call."""
    if k.lang in _STRICT_FENCE_LANGS:
        k.decided = True
        return True
    body = p.construct_text()[k.body_start :] + p.buf[p.pos : p.pos + WINDOW]
    seg = body[:WINDOW]
    m = CALL_PREFIX.match(seg)
    if m and m.group(2) in p.tools:
        k.decided = True
        return True
    if m is None and not p.eof and len(seg) < WINDOW and CALL_VIABLE.fullmatch(seg):
        return True
    # Not a call: the fence so far is prose, and the rest is read as a plain fence.
    p.as_prose(p.done())
    k.mode = "plain"
    k.on_close = None
    k.decided = True
    p.k = k
    p.state = st_fence
    return False


def read_call_fence(p: Cursor, k: Construct, body: str, text: str, closed: bool) -> None:
    """The calls in a closed fence; an unclosed one is an error only if it began as a call."""
    if not closed:
        if not (k.lang in _STRICT_FENCE_LANGS and body.strip()):
            if not CALL_PREFIX.match(body[:WINDOW]):
                p.as_prose(text)
                return
        unclosed_fence(p, k, text)
        return
    resolve_call_fence(p, k, body, text)


def resolve_call_fence(p: Cursor, k: Construct, body: str, text: str) -> None:
    """The calls in a fence's body, or prose when it is not calls."""
    strict = k.lang in _STRICT_FENCE_LANGS
    if k.lang == "tool" and is_continue_block(body):
        found = read_continue_block(body, p.tools)
        if isinstance(found, Failed):
            p.error(found.message, text)
        else:
            p.call(found.name, found.arguments, "continue_tool", text)
        return
    if _OTHER_CALL_SYNTAX.search(body):  # a fence showing another syntax is an example
        p.as_prose(text)
        return
    try:
        obj = load_json(body.strip(), f"```{k.lang} block")
    except BadCall as exc:
        if strict:
            p.error(str(exc), text)
        else:
            p.as_prose(text)
        return
    items = obj if isinstance(obj, list) else [obj]
    if not strict and not looks_like_calls(items, p.tools, every=True):
        p.as_prose(text)
        return
    if not items:
        p.error(f"empty call list in ```{k.lang} block", text)
    for item in items:
        try:
            name, args = name_and_arguments(item, f"```{k.lang} block")
        except BadCall as exc:
            p.error(str(exc), text)
            continue
        p.call(name, args, "fenced_json", text)


def at_fence(p: Cursor, m: re.Match[str], nl: int, lang: str) -> bool | None:
    """A ```json, ```tool or ```tool_call fence: held as a call while it may be one."""
    if lang not in LANGS:
        return None
    p.prose_to(m.start(1))
    k = p.start(f"```{lang}", st_fence)
    k.mode = "call"
    k.decide = decide_call_fence
    return open_fence(p, k, m, nl, lang, read_call_fence)


class FencedJson(Syntax):
    """A fence of JSON calls: it ends where the fence closes."""

    name = NAME
    example = DESCRIPTION
    models = "small models that wrap their JSON calls in a Markdown fence"
    forms = ((NAME, DESCRIPTION),)
    openings = (AtFence(at_fence),)
