"""IBM Granite 3 and Phi-4-mini: a JSON call list after `<|tool_call|>`.

    <|tool_call|>[{"name": "read_file", "arguments": {"path": "a.py"}}]

The list ends the call; Phi-4-mini closes it with `<|/tool_call|>`, which is then taken too.
Written by Granite 3.0 / 3.1 and Phi-4-mini-instruct.
"""

from __future__ import annotations

from toolgate.calls.syntaxes.base import Reading, Syntax, Tools, json_calls


class Granite(Syntax):
    """`<|tool_call|>[{"name": …, "arguments": …}]`."""

    name = "granite"
    opens = ("<|tool_call|>",)
    trailer = "<|/tool_call|>"
    example = '<|tool_call|>[{"name": "NAME", "arguments": {"argument": "value"}}]'
    models = "Granite 3, Phi-4-mini"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The JSON value after the opening."""
        return json_calls(self, body, "<|tool_call|>")
