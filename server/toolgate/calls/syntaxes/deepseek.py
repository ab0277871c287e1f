"""DeepSeek V3, R1 and V3.1: calls between full-width bar tokens.

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file
    ```json
    {"path": "a.py"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

V3.1 drops the type and the fence: `<｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "a.py"}`.
Written by DeepSeek V3, V3-0324, R1, R1-0528 and V3.1.
"""

from __future__ import annotations

import re

from toolgate.calls.arguments import strip_fence
from toolgate.calls.syntaxes.base import Failed, Found, Reading, Syntax, Tools

_CALL = re.compile(r"<｜tool▁call▁begin｜>(.*?)<｜tool▁sep｜>(.*?)<｜tool▁call▁end｜>", re.S)


class DeepSeek(Syntax):
    """`<｜tool▁calls▁begin｜>` … `<｜tool▁calls▁end｜>`."""

    name = "deepseek"
    opens = ("<｜tool▁calls▁begin｜>",)
    closes = ("<｜tool▁calls▁end｜>",)
    example = (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{"argument": "value"}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )
    models = "DeepSeek V3, R1, V3.1"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """Each `<｜tool▁call▁begin｜>` … `<｜tool▁call▁end｜>` is one call."""
        calls: list[Found | Failed] = []
        for m in _CALL.finditer(body):
            head, rest = m.group(1).strip(), m.group(2).strip()
            if head == "function" and "\n" in rest:  # V3 / R1: the name, then a json fence
                name, _, args = rest.partition("\n")
                calls.append(Found(name.strip(), strip_fence(args.strip())))
            else:
                calls.append(Found(head, strip_fence(rest)))
        return calls or [self.failure("no <｜tool▁call▁begin｜> … <｜tool▁call▁end｜> inside")]
