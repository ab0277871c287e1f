"""Functionary v3.1 and Llama 3.1's custom format: JSON arguments in `<function=NAME>`.

    <function=read_file>{"path": "a.py"}</function>

`<function=NAME>` also opens Qwen3-Coder's parameter form: that reader hands the construct
over when a JSON object follows the opening. Written by Functionary v3.1 (meetkai) and Llama
3.1 prompted with its `<function=…>` format.
"""

from __future__ import annotations

from toolgate.calls.syntaxes.base import Found, Reading, Syntax, Tools


class Functionary(Syntax):
    """`<function=NAME>{JSON}</function>`."""

    name = "functionary"
    opens = ()  # entered from `<function=NAME>` (see the module's docstring)
    closes = ("</function>",)
    example = '<function=NAME>{"argument": "value"}</function>'
    models = "Functionary v3.1, Llama 3.1"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The name is in the opening; the body is the arguments."""
        return [Found(opening[len("<function=") : -1].strip(), body.strip())]
