"""Continue's fallback tool block: a ```tool fence with the name and each argument spelled out.

    ```tool
    TOOL_NAME: read_file
    BEGIN_ARG: path
    a.py
    END_ARG
    ```

The values are typed by the tool's schema. Written by models prompted by Continue's system
message tools (any model without native tool calling there).
"""

from __future__ import annotations

import re
from typing import Any

from toolgate.calls.arguments import tool_properties, typed_value
from toolgate.calls.syntaxes.base import Failed, Found, Tools

_NAME = re.compile(r"\s*TOOL_NAME:\s*(\S+)\s*\n")
_ARG = re.compile(r"BEGIN_ARG:\s*(\S+)[ \t]*\r?\n(.*?)\r?\n?END_ARG", re.S)
EXAMPLE = "```tool\nTOOL_NAME: NAME\nBEGIN_ARG: argument\nvalue\nEND_ARG\n```"


def is_continue_block(body: str) -> bool:
    """Whether a ```tool fence's body is Continue's block rather than JSON."""
    return body.lstrip().startswith("TOOL_NAME:")


def read_continue_block(body: str, tools: Tools) -> Found | Failed:
    """The call in a ```tool fence written in Continue's format."""
    m = _NAME.match(body + "\n")
    if m is None:
        return Failed(
            f"continue_tool: expected TOOL_NAME: NAME on the first line; expected {EXAMPLE}"
        )
    name = m.group(1)
    props = tool_properties(tools, name)
    args: dict[str, Any] = {}
    pos = m.end()
    rest = body + "\n"
    for arg in _ARG.finditer(rest, pos):
        if rest[pos : arg.start()].strip():
            break
        args[arg.group(1)] = typed_value(arg.group(2), props.get(arg.group(1)))
        pos = arg.end()
    if rest[pos:].strip():
        return Failed(
            f"continue_tool: unexpected text after the arguments of '{name}' "
            f"(each argument is BEGIN_ARG: name, its value, END_ARG); expected {EXAMPLE}"
        )
    return Found(name, args)
