"""FunctionGemma (Gemma 3 270M for function calling): `call:NAME{key:value,…}`.

    <start_function_call>call:read_file{path:<escape>a.py<escape>}<end_function_call>

Values are wrapped in `<escape>` (typed by the tool's schema), or bare JSON. Written by
FunctionGemma and Gemma 3 fine-tunes on its format.
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolgate.calls.arguments import tool_properties, typed_value
from toolgate.calls.syntaxes.base import Found, Reading, Syntax, Tools

_ESCAPE = "<escape>"
_KEY = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*:\s*")


class FunctionGemma(Syntax):
    """`<start_function_call>call:NAME{k:<escape>v<escape>}<end_function_call>`."""

    name = "function_gemma"
    opens = ("<start_function_call>",)
    closes = ("<end_function_call>",)
    example = "<start_function_call>call:NAME{argument:<escape>value<escape>}<end_function_call>"
    models = "FunctionGemma, Gemma 3"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The name before `{`, then `key:value` pairs separated by commas."""
        text = body.strip()
        if not text.startswith("call:") or "{" not in text or not text.endswith("}"):
            return [self.failure("expected call:NAME{…}")]
        name, _, rest = text[len("call:") :].partition("{")
        name = name.strip()
        props = tool_properties(tools, name)
        args: dict[str, Any] = {}
        inner, i = rest[:-1], 0
        while i < len(inner):
            m = _KEY.match(inner, i)
            if m is None:
                return [self.failure(f"expected key:value at character {i} of the arguments")]
            key, i = m.group(1), m.end()
            if inner.startswith(_ESCAPE, i):
                end = inner.find(_ESCAPE, i + len(_ESCAPE))
                if end < 0:
                    return [self.failure(f"the value of '{key}' has no closing <escape>")]
                args[key] = typed_value(inner[i + len(_ESCAPE) : end], props.get(key))
                i = end + len(_ESCAPE)
            else:
                comma = inner.find(",", i)
                raw = inner[i : comma if comma >= 0 else len(inner)].strip()
                try:
                    args[key] = json.loads(raw)
                except ValueError:
                    args[key] = raw
                i = comma if comma >= 0 else len(inner)
            while i < len(inner) and inner[i] in ", \t\r\n":  # pairs may lack the comma
                i += 1
        return [Found(name.strip(), args)]
