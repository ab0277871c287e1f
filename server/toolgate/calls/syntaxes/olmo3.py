"""OLMo 3: pythonic calls, one per line, in `<function_calls>`.

    <function_calls>
    read_file(path="a.py")
    </function_calls>

Written by OLMo 3 Instruct and Think.
"""

from __future__ import annotations

from toolgate.calls.syntaxes.base import Reading, Syntax, Tools, pythonic_calls


class Olmo3(Syntax):
    """`<function_calls>NAME(a=1)</function_calls>`."""

    name = "olmo3"
    opens = ("<function_calls>",)
    closes = ("</function_calls>",)
    example = '<function_calls>\nNAME(argument="value")\n</function_calls>'
    models = "OLMo 3"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """One Python call per line."""
        return pythonic_calls(self, body)
