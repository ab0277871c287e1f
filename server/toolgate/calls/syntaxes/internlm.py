"""InternLM2 / 2.5: a plugin action holding one JSON call.

    <|action_start|><|plugin|>
    {"name": "read_file", "parameters": {"path": "a.py"}}<|action_end|>

Written by InternLM2-Chat and InternLM2.5-Chat.
"""

from __future__ import annotations

from toolgate.calls.syntaxes.base import Reading, Syntax, Tools, json_calls


class InternLM(Syntax):
    """`<|action_start|><|plugin|>{JSON}<|action_end|>`."""

    name = "internlm"
    opens = ("<|action_start|>",)
    closes = ("<|action_end|>",)
    example = '<|action_start|><|plugin|>{"name": "NAME", "parameters": {…}}<|action_end|>'
    models = "InternLM2, InternLM2.5"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The JSON object after `<|plugin|>`."""
        text = body.strip()
        if not text.startswith("<|plugin|>"):
            return [self.failure("expected <|plugin|> after <|action_start|>")]
        return json_calls(self, text[len("<|plugin|>") :], "<|action_start|><|plugin|>")
