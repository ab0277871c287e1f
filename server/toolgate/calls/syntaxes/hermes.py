"""Hermes: a JSON call object in `<tool_call>` tags, as Hermes 2/3 and Qwen 2.5 write them.

    <tool_call>
    {"name": "read_file", "arguments": {"path": "src/app.py"}}
    </tool_call>

Also read: a list of call objects, or objects separated by commas, in one tag (xLAM, some
Qwen fine-tunes). `<tool_call>` also opens two other families' forms, handed to their readers:
Qwen3-Coder's `<function=NAME>` (`qwen_xml`) and GLM's `<tool_call>NAME<arg_key>…` (`glm`).
Written by Hermes 2 Pro, Hermes 3, Qwen 2.5 (Instruct and Coder), Qwen3, xLAM.
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolgate.calls.arguments import BadCall, is_json, load_json, name_and_arguments, strip_fence
from toolgate.calls.cursor import WS, Construct, Cursor, json_scanner, skip
from toolgate.calls.delimited import enter, st_delimited
from toolgate.calls.openings import AfterLt
from toolgate.calls.syntaxes.base import Syntax
from toolgate.calls.syntaxes.qwen_xml import open_function
from toolgate.calls.syntaxes.tag import st_tag

NAME = "hermes"
DESCRIPTION = '<tool_call>{"name": …, "arguments": …}</tool_call> (Hermes, Qwen 2.5)'
_SCAN_HERMES = json_scanner("</tool_call>", "<tool_call>")
_NESTED_HERMES = re.compile(r"</?tool_call>")


def open_hermes(p: Cursor, m: re.Match[str]) -> bool:
    """At `<tool_call>` (matched by `m`): what follows decides which form it opens."""
    k = p.start("<tool_call>", st_hermes_open)
    k.syntax = "hermes"
    return p.take(m.end()) or True


def st_hermes_open(p: Cursor) -> bool:
    """After `<tool_call>`: Qwen3-Coder's `<function=`, GLM's name, or a JSON call."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    ws = skip(WS, buf, pos)
    if buf.startswith("<function=", ws):
        if not p.take(ws):
            return True
        return open_function(p, wrapped=True)
    if not p.eof and (ws >= n or "<function=".startswith(buf[ws : ws + 10])):
        return False
    k = p.k
    glm = p.syntaxes.get("glm")
    if ws < n and (buf[ws].isalpha() or buf[ws] == "_") and glm is not None:
        # `<tool_call>NAME<arg_key>…`: GLM's form, read by its syntax
        enter(p, k, glm, "<tool_call>", taken=True)
        p.state = st_delimited
        return True
    k.out_re, k.in_re = _SCAN_HERMES
    k.close, k.hold, k.depth_mode = "</tool_call>", 11, False
    k.open_len = p.acc_n
    k.on_close, k.cand_re = resolve_hermes, _NESTED_HERMES
    p.state = st_tag
    return True


def resolve_hermes(p: Cursor, k: Construct, body: str, raw: str, closed: bool) -> None:
    """The call object, list of call objects, or objects separated by commas in the tag."""
    text = strip_fence(body.strip())
    try:
        value = hermes_value(text)
        if value is None:
            value = load_json(text, "tool_call")
        if isinstance(value, list) and value:
            # several calls in one tag, as xLAM and some Qwen fine-tunes write them
            for item in value:
                try:
                    name, args = name_and_arguments(item, k.what)
                except BadCall as exc:
                    p.error(str(exc), raw)
                    continue
                p.call(name, args, k.syntax, raw)
            return
        name, args = name_and_arguments(value, k.what)
    except BadCall as exc:
        p.error(str(exc), raw)
        return
    p.call(name, args, k.syntax, raw)


def hermes_value(text: str) -> Any:
    """Objects separated by commas in one `<tool_call>`, as a list; None for anything else."""
    if not text.startswith("{") or is_json(text):
        return None
    try:
        value = json.loads(f"[{text}]", strict=False)
    except (ValueError, RecursionError):
        return None
    return value if all(isinstance(v, dict) for v in value) else None


class Hermes(Syntax):
    """`<tool_call>{JSON}</tool_call>`: it ends at a `</tool_call>` outside JSON strings."""

    name = NAME
    example = DESCRIPTION
    models = "Hermes 2 Pro, Hermes 3, Qwen 2.5, Qwen3, xLAM"
    forms = ((NAME, DESCRIPTION),)
    openings = (AfterLt("tool_call>", ("<tool_call>",), open_hermes, stop="tool_"),)
