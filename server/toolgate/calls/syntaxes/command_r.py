"""Cohere Command R7B and Command A: a JSON action list.

    <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "read_file",
    "parameters": {"path": "a.py"}}]<|END_ACTION|>

Written by Command R7B (c4ai-command-r7b) and Command A.
"""

from __future__ import annotations

from toolgate.calls.arguments import BadCall, load_json
from toolgate.calls.syntaxes.base import Failed, Found, Reading, Syntax, Tools


class CommandR(Syntax):
    """`<|START_ACTION|>[{"tool_name": …, "parameters": …}]<|END_ACTION|>`."""

    name = "command_r"
    opens = ("<|START_ACTION|>",)
    closes = ("<|END_ACTION|>",)
    example = '<|START_ACTION|>[{"tool_name": "NAME", "parameters": {…}}]<|END_ACTION|>'
    models = "Command R7B, Command A"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """Each item names its tool with `tool_name`."""
        try:
            value = load_json(body.strip(), "<|START_ACTION|>")
        except BadCall as exc:
            return [self.failure(str(exc))]
        items = value if isinstance(value, list) else [value]
        calls: list[Found | Failed] = []
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("tool_name"), str):
                calls.append(self.failure('each action must hold "tool_name" and "parameters"'))
                continue
            calls.append(Found(item["tool_name"], item.get("parameters", {})))
        return calls or [self.failure("an empty action list")]
