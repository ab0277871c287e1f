"""GLM 4.5 / 4.6 / 4.7: the tool's name, then key and value elements, in `<tool_call>`.

    <tool_call>read_file
    <arg_key>path</arg_key>
    <arg_value>a.py</arg_value>
    </tool_call>

Values are typed by the tool's schema, as in the other XML forms. `<tool_call>` also opens
Hermes' JSON calls: the Hermes reader hands the construct over when a name follows the tag.
Written by GLM-4.5, GLM-4.5-Air, GLM-4.6 and GLM-4.7.
"""

from __future__ import annotations

import re
from typing import Any

from toolgate.calls.arguments import tool_properties, typed_value
from toolgate.calls.syntaxes.base import Found, Reading, Syntax, Tools

_PAIR = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.S)
_NAME = re.compile(r"\s*([^\s<]+)\s*")


class Glm(Syntax):
    """`<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`."""

    name = "glm"
    opens = ()  # entered from `<tool_call>` (see the module's docstring)
    closes = ("</tool_call>",)
    example = "<tool_call>NAME<arg_key>argument</arg_key><arg_value>value</arg_value></tool_call>"
    models = "GLM-4.5, GLM-4.6, GLM-4.7"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The name, then each key/value pair typed by the tool's schema."""
        m = _NAME.match(body)
        if m is None:
            return [self.failure("no tool name after <tool_call>")]
        name = m.group(1)
        props = tool_properties(tools, name)
        args: dict[str, Any] = {}
        pos = m.end()
        for pair in _PAIR.finditer(body, pos):
            if body[pos : pair.start()].strip():
                break
            args[pair.group(1).strip()] = typed_value(pair.group(2), props.get(pair.group(1)))
            pos = pair.end()
        if body[pos:].strip():
            return [self.failure(f"unexpected text inside <tool_call>{name}: {body[pos:][:40]!r}")]
        return [Found(name, args)]
