"""The visible prose of an answer, with the blank lines around removed calls kept to one."""

from __future__ import annotations


class Content:
    """Visible prose, with the blank lines around stripped calls kept to one."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.fresh: list[str] = []  # produced since the last take_content()
        self.held = ""  # trailing whitespace not yet known to be inside the text
        self.seam = False
        self.started = False

    def emit(self, text: str) -> None:
        """Add prose."""
        # `held` is the trailing blank run from its first newline (all of it before any text):
        # it may still touch a stripped call, and then its blank lines are collapsed.
        if not text:
            return
        if self.held or not self.started:
            core = text.lstrip(_BLANKS)
            if not core:
                self.held += text
                return
            run = self.held + text[: len(text) - len(core)]
            if self.seam:
                run = _collapse(run) if self.started else ""
            self.held = ""
            self.seam = False
            self.started = True
            text = run + core
        elif self.seam:
            core = text.lstrip(_BLANKS)
            if not core:
                cut = _line_break(text, 0)
                self._out(text[:cut])
                self.held = text[cut:]
                return
            text = _collapse(text[: len(text) - len(core)]) + core
            self.seam = False
        if text[-1] not in _BLANKS:
            self.parts.append(text)
            self.fresh.append(text)
            return
        cut = _line_break(text, len(text.rstrip(_BLANKS)))
        self._out(text[:cut])
        self.held = text[cut:]

    def mark_seam(self) -> None:
        """A call (or an error) was taken out here."""
        self.seam = True

    def close(self) -> None:
        """The end of the answer: decide the trailing blank lines."""
        if self.held and self.started:
            # after a stripped call, the answer's last blank lines go; spaces before them stay
            self._out(self.held[: _line_break(self.held, 0)] if self.seam else self.held)
        elif self.held and not self.seam:
            self._out(self.held)
        self.held = ""

    def _out(self, text: str) -> None:
        if text:
            self.parts.append(text)
            self.fresh.append(text)

    def last_lines(self, count: int, limit: int = 256) -> list[str]:
        """The last `count` lines of prose (fewer at the start), when the text ends with them.

        The text must end with exactly one line break. Empty when a call was taken out since;
        a line of `limit` characters or more ends the list there.
        """
        if self.seam or self.held.count("\n") != 1 or not self.parts:
            return []
        window = limit * count
        tail, taken = "", 0
        for part in reversed(self.parts):
            tail, taken = part + tail, taken + 1
            if tail.count("\n") >= count or len(tail) >= window:
                break
        lines = tail[-window:].split("\n")
        if taken < len(self.parts) or len(tail) > window:
            lines = lines[1:]  # the first may be part of a longer line
        kept: list[str] = []
        for line in reversed(lines[-count:]):
            if len(line) >= limit:
                break
            kept.insert(0, line)
        return kept

    def take(self) -> str:
        """The prose added since the last take."""
        text = "".join(self.fresh)
        self.fresh = []
        return text

    def text(self) -> str:
        """All the prose so far."""
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


def _collapse(run: str) -> str:
    """Keep at most two newlines of a blank run (and the indentation after the last one)."""
    first = run.find("\n")
    second = run.find("\n", first + 1) if first >= 0 else -1
    last = run.rfind("\n")
    if second < 0 or last == second:
        return run
    return run[: second + 1] + run[last + 1 :]


def _line_break(text: str, start: int) -> int:
    """Where a trailing blank run's first line break begins (a final lone CR counts)."""
    nl = text.find("\n", start)
    if nl >= 0:
        return nl - 1 if nl > start and text[nl - 1] == "\r" else nl
    return len(text) - 1 if text.endswith("\r") else len(text)


_BLANKS = " \t\r\n"
