"""Llama 4: a pythonic call list between `<|python_start|>` and `<|python_end|>`.

    <|python_start|>[read_file(path="a.py")]<|python_end|>

`<|python_end|>` may be missing (servers strip it as a stop token): the output's end then ends
the list, which must be whole. Written by Llama 4 Scout and Maverick.
"""

from __future__ import annotations

from toolgate.calls.syntaxes.base import Reading, Syntax, Tools, pythonic_calls


class Llama4(Syntax):
    """`<|python_start|>[NAME(a=1)]<|python_end|>`."""

    name = "llama4"
    opens = ("<|python_start|>",)
    closes = ("<|python_end|>",)
    ends_at_output_end = True  # `<|python_end|>` is a stop token that servers may strip
    example = '<|python_start|>[NAME(argument="value")]<|python_end|>'
    models = "Llama 4"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The Python call list between the tokens."""
        return pythonic_calls(self, body)
