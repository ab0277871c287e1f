"""gpt-oss's harmony format: messages in channels; a call is a message sent to a function.

    <|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json
    <|message|>{"path": "a.py"}<|call|>

Messages to no function (the `analysis` and `final` channels) are shown as prose. `<|call|>`
and `<|return|>` are stop tokens that servers often strip, so the output's end also ends a
message. Written by gpt-oss-20b and gpt-oss-120b.
"""

from __future__ import annotations

import re

from toolgate.calls.syntaxes.base import Found, Prose, Reading, Syntax, Tools

_RECIPIENT = re.compile(r"\bto=(?:functions\.)?([^\s<]+)")


class Harmony(Syntax):
    """`<|channel|>… to=functions.NAME <|message|>{JSON}<|call|>`."""

    name = "harmony"
    opens = ("<|start|>", "<|channel|>")
    closes = ("<|call|>", "<|end|>", "<|return|>")
    ends_at_output_end = True
    example = "<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>"
    models = "gpt-oss"

    def read(self, opening: str, body: str, tools: Tools) -> Reading:
        """The header names the recipient; the message is the arguments (or prose)."""
        header, sep, message = body.partition("<|message|>")
        if not sep:
            return [self.failure("a message header without <|message|>")]
        m = _RECIPIENT.search(header)
        if m is None:
            return Prose(message)  # analysis or final: what the model says, not a call
        return [Found(m.group(1), message.strip())]
