"""IBM Granite 3: a JSON call list after `<|tool_call|>`.

    <|tool_call|>[{"name": "read_file", "arguments": {"path": "a.py"}}]

The list ends the call; a `<|/tool_call|>` right after it, which some chat templates add, is
taken too. Written by Granite 3.0 and 3.1.
"""

from __future__ import annotations

from toolgate.calls.syntaxes.base import Reading, Syntax, Tools, json_calls


class Granite(Syntax):
    """`<|tool_call|>[{"name": …, "arguments": …}]`."""

    name = "granite"
    opens = ("<|tool_call|>",)
    trailer = "<|/tool_call|>"
    example = '<|tool_call|>[{"name": "NAME", "arguments": {"argument": "value"}}]'
    models = "Granite 3"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The JSON value after the opening."""
        return json_calls(self, body, "<|tool_call|>")
