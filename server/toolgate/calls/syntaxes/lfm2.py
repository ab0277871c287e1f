"""Liquid LFM2: a pythonic call list between tool-call tokens.

    <|tool_call_start|>[read_file(path="a.py")]<|tool_call_end|>

A JSON list of `{"name", "arguments"}` objects is read too. Written by LFM2 and LFM2.5.
"""

from __future__ import annotations

from toolgate.calls.syntaxes.base import Reading, Syntax, Tools, json_calls, pythonic_calls


class Lfm2(Syntax):
    """`<|tool_call_start|>[NAME(a=1)]<|tool_call_end|>`."""

    name = "lfm2"
    opens = ("<|tool_call_start|>",)
    closes = ("<|tool_call_end|>",)
    example = '<|tool_call_start|>[NAME(argument="value")]<|tool_call_end|>'
    models = "LFM2"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """Python calls, or JSON call objects."""
        text = body.strip()
        if text.startswith("{") or text.replace(" ", "").startswith("[{"):
            return json_calls(self, text, "<|tool_call_start|>")
        return pythonic_calls(self, text)
