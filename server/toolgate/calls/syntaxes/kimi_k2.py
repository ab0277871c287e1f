"""Kimi K2: a section of calls, each with a `functions.NAME:INDEX` id and JSON arguments.

    <|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0
    <|tool_call_argument_begin|>{"path": "a.py"}<|tool_call_end|><|tool_calls_section_end|>

Written by Kimi K2 and K2-Instruct (Moonshot AI).
"""

from __future__ import annotations

import json
import re

from toolgate.calls.syntaxes.base import Failed, Found, Reading, Syntax, Tools, strip_namespace

_CALL = re.compile(
    r"<\|tool_call_begin\|>\s*(.*?)\s*<\|tool_call_argument_begin\|>(.*?)<\|tool_call_end\|>",
    re.S,
)


class KimiK2(Syntax):
    """`<|tool_calls_section_begin|>` … `<|tool_calls_section_end|>`."""

    name = "kimi_k2"
    opens = ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>")
    closes = ("<|tool_calls_section_end|>", "<|tool_call_section_end|>")
    example = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0"
        '<|tool_call_argument_begin|>{"argument": "value"}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    )
    models = "Kimi K2"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """Each `<|tool_call_begin|>` … `<|tool_call_end|>` is one call."""
        calls: list[Found | Failed] = []
        for m in _CALL.finditer(body):
            name, args = strip_namespace(m.group(1)), m.group(2).strip()
            if name.isdigit():  # a bare counter: the tool is the one these arguments fit
                name = _fitting_tool(args, tools) or name
            calls.append(Found(name, args))
        return calls or [self.failure("no <|tool_call_begin|> … <|tool_call_end|> inside")]


def _fitting_tool(args: str, tools: Tools) -> str | None:
    """The only tool whose properties hold every argument, if there is exactly one."""
    try:
        keys = set(json.loads(args))
    except (ValueError, TypeError):
        return None
    fitting = [
        name
        for name, schema in tools.items()
        if keys <= set(schema.get("properties") or {}) or (len(tools) == 1 and not keys)
    ]
    return fitting[0] if len(fitting) == 1 else None
