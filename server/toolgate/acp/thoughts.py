"""Streamed text split into thinking and answer at `<think>…</think>`.

Servers without a reasoning parser (llama.cpp without `--reasoning-format`, vLLM without
`--reasoning-parser`) pass a thinking model's `<think>…</think>` through in the text. The
editor shows what is inside as the agent's thought and the rest as its message. Only a block
that opens the answer (after white space) counts: a `<think>` later in the text is the
model's words, such as code that mentions the tag. A template that puts `<think>` into the
prompt leaves only `</think>` in the text; that is not recognised, and the text is shown as
the message, as it is.
"""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"


class ThinkSplitter:
    """Feed text pieces; get back (thought, message) pieces in order."""

    def __init__(self) -> None:
        self._state = "start"  # start → thinking → message, or start → message
        self._held = ""  # text that may still turn out to be (part of) a tag
        self._trim = False  # the newlines right after a tag belong to the tag

    def feed(self, text: str) -> list[tuple[str, str]]:
        """The (kind, text) pieces that are certain now; kind is "thought" or "message"."""
        out: list[tuple[str, str]] = []
        self._held += text
        while self._held:
            if self._trim:
                self._held = self._held.lstrip("\n")
                if not self._held:
                    break
                self._trim = False
            if self._state == "message":
                out.append(("message", self._held))
                self._held = ""
            elif self._state == "start":
                stripped = self._held.lstrip()
                if stripped.startswith(OPEN):
                    self._state, self._trim = "thinking", True
                    self._held = stripped[len(OPEN) :]
                elif OPEN.startswith(stripped):
                    break  # white space or the start of the tag: wait for more
                else:
                    self._state = "message"
            else:  # thinking
                end = self._held.find(CLOSE)
                if end >= 0:
                    if end:
                        out.append(("thought", self._held[:end]))
                    self._state, self._trim = "message", True
                    self._held = self._held[end + len(CLOSE) :]
                    continue
                keep = _partial_suffix(self._held, CLOSE)
                cut = len(self._held) - keep
                if cut:
                    out.append(("thought", self._held[:cut]))
                self._held = self._held[cut:]
                break
        return out

    def finish(self) -> list[tuple[str, str]]:
        """What is left at the end of the answer."""
        held, self._held = self._held, ""
        if not held:
            return []
        return [("thought" if self._state == "thinking" else "message", held)]


def _partial_suffix(text: str, tag: str) -> int:
    """How many characters at the end of `text` could begin `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0
