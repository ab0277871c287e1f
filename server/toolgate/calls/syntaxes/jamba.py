"""AI21 Jamba: a JSON call list in `<tool_calls>`.

    <tool_calls>[{"name": "read_file", "arguments": {"path": "a.py"}}]</tool_calls>

Written by Jamba 1.5 and 1.6.
"""

from __future__ import annotations

from toolgate.calls.syntaxes.base import Reading, Syntax, Tools, json_calls


class Jamba(Syntax):
    """`<tool_calls>[…]</tool_calls>`."""

    name = "jamba"
    opens = ("<tool_calls>",)
    closes = ("</tool_calls>",)
    example = '<tool_calls>[{"name": "NAME", "arguments": {"argument": "value"}}]</tool_calls>'
    models = "Jamba 1.5, 1.6"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The JSON list between the tags."""
        return json_calls(self, body, "<tool_calls>")
