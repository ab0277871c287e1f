"""The tag written with a blank after `<`: `< tool name="NAME" args>{JSON}</tool>`.

    < tool name="read_file" args>{"path": "a.py"}</tool>

Written by small models after a few well-formed calls in one answer (seen with
Qwen2.5-Coder-0.5B-Instruct, the embedded model). HTML would not call it a tag, so the
driver's tag reader passes it as prose; read here, it runs as the call it plainly means, and
a body that is not `"NAME" args>{JSON}` is an error naming the canonical form.
"""

from __future__ import annotations

import re

from toolgate.calls.syntaxes.base import Found, Reading, Syntax, Tools

# What follows `name=`: the quoted (or bare) name, `args` optionally, `>`, then the arguments.
_BODY = re.compile(r"""\s*(["']?)([\w.-]+)\1\s*(?:args\s*)?>(.*)""", re.DOTALL)


class SpacedTag(Syntax):
    """`< tool name="NAME" args>{…}</tool>`."""

    name = "spaced_tag"
    opens = ("< tool name=",)
    closes = ("</tool>",)
    example = '<tool name="NAME" args>{"argument": "value"}</tool>'
    models = "Qwen2.5-Coder-0.5B-Instruct (the embedded model)"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The name and the JSON arguments of the tag."""
        m = _BODY.fullmatch(body)
        if m is None:
            return [self.failure('after "< tool name=" expected "NAME" args>{JSON}')]
        arguments = m.group(3).strip()
        return [Found(m.group(2), arguments or "{}")]
