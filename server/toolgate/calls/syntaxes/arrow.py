"""Arrow blocks: `>>> RUN COMMAND` with its command, `>>> WRITE FILE: path` with a fenced block.

    >>> RUN COMMAND
    pytest -q tests/test_app.py

    >>> WRITE FILE: src/app.py
    ```python
    print("hello")
    ```

The command may follow on the arrow's own line; a pytest command is a `run_tests` call when the
tool is offered. A `>>>` line that is neither is prose (a Python prompt). Written by models
prompted with Toolgate's arrow-block examples, and by small models that imitate them.
"""

from __future__ import annotations

import re

from toolgate.calls.cursor import CLOSE_LINE, WINDOW, Construct, Cursor, skip, waits_for
from toolgate.calls.openings import AtLineStart
from toolgate.calls.prose import FENCE_OPEN, fence_lang, fence_line, open_fence, unclosed_fence
from toolgate.calls.syntaxes.base import Syntax

NAME = "arrow_block"
DESCRIPTION = ">>> RUN COMMAND + command line, or >>> WRITE FILE: path + fenced block"
_RUN_COMMAND = re.compile(
    r"[ \t]*>>>[ \t]*RUN[ \t]+COMMAND(?!\w)[ \t]*:?[ \t]*(.*?)[ \t]*\r?", re.I
)
_WRITE_FILE = re.compile(r"[ \t]*>>>[ \t]*WRITE[ \t]+FILE(?!\w)[ \t]*:?[ \t]*(.*?)[ \t]*\r?", re.I)
_ARROW_KEYWORD = re.compile(r"[ \t]*>>>[ \t]*(?:RUN[ \t]+COMMAND|WRITE[ \t]+FILE)", re.I)
_ARROW_VIABLE = re.compile(
    r"[ \t]*>>>[ \t]*(?:R(?:U(?:N(?:[ \t]+(?:C(?:O(?:M(?:M(?:A(?:N(?:D)?)?)?)?)?)?)?)?)?)?"
    r"|W(?:R(?:I(?:T(?:E(?:[ \t]+(?:F(?:I(?:L(?:E)?)?)?)?)?)?)?)?)?)?",
    re.I,
)
_ARROW_NEXT_PARTIAL = re.compile(r"[ \t]*(?:`{1,2}|~{1,2}|\r)?")
_BLANK_LINES = re.compile(r"(?:[ \t]*\r?\n)*")
_PYTEST = re.compile(r"\s*(?:pytest|py\.test|python3?(?:\.\d+)?\s+-m\s+pytest)(?:\s|$)")


def at_arrow(p: Cursor) -> bool | None:
    """At `>>>` at a line start: RUN COMMAND, WRITE FILE, or prose (None); False: wait."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    nl = buf.find("\n", pos, pos + WINDOW)
    if nl < 0:
        if not p.eof and n - pos < WINDOW:
            # Decide early when the line can no longer become RUN COMMAND or WRITE FILE.
            if skip(_ARROW_VIABLE, buf, pos) < n:
                if not _ARROW_KEYWORD.match(buf, pos):
                    return None
            return False
        if n - pos >= WINDOW:
            return None
        nl = n
    line = buf[pos:nl]
    run = _RUN_COMMAND.fullmatch(line)
    write = _WRITE_FILE.fullmatch(line) if run is None else None
    if run is None and write is None:
        return None
    p.prose_to(pos + len(line) - len(line.lstrip(" \t")))
    k = p.start("RUN COMMAND block", st_arrow_next)
    k.syntax = "arrow_block"
    if run is not None and run.group(1):
        p.take(nl - (1 if line.endswith("\r") else 0))
        arrow_command(p, run.group(1), p.done())
        return True
    if write is not None:
        path = write.group(1).strip().strip("`'\"")
        if not path:
            p.take(nl)
            p.error(
                "WRITE FILE without a path; expected >>> WRITE FILE: path/to/file "
                "followed by a fenced code block",
                p.done(),
            )
            return True
        k.name, k.mode, k.what = path, "write", "WRITE FILE block"
    else:
        k.mode = "run"
    p.take(min(n, nl + 1))
    return True


def st_arrow_next(p: Cursor) -> bool:
    """After an arrow line: skip blank lines, then a fence or (for RUN COMMAND) a line."""
    k = p.k
    buf, n = p.buf, len(p.buf)
    blank = skip(_BLANK_LINES, buf, p.pos)
    if not p.take(blank):
        return True
    pos = p.pos
    if pos >= n and not p.eof:
        return False
    m = FENCE_OPEN.match(buf, pos)
    if m is None and not p.eof and _ARROW_NEXT_PARTIAL.fullmatch(buf, pos):
        return False  # the start of a fence, or of a blank line cut before its line feed
    if m is not None:
        if m.end() >= n and not p.eof:
            return False
        line = fence_line(p, m)
        if line is None:
            return False
        nl, info = line
        return open_fence(p, k, m, nl, fence_lang(info), read_arrow_fence)
    if k.mode == "run" and pos < n:
        k.value_start = p.acc_n
        p.state = st_arrow_line
        return True
    text = p.done()
    what = (
        f"WRITE FILE: {k.name} must be followed by a fenced code block holding the content"
        if k.mode == "write"
        else "RUN COMMAND must be followed by the command on the next line"
    )
    p.error(f"{what}; nothing was run", text)
    return True


@waits_for(CLOSE_LINE)
def st_arrow_line(p: Cursor) -> bool:
    """RUN COMMAND's command line."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    nl = buf.find("\n", pos)
    if nl < 0 and not p.eof:
        return not p.take(n - (1 if buf.endswith("\r") else 0))
    end = n if nl < 0 else nl
    if not p.take(end - (1 if end > pos and buf[end - 1] == "\r" else 0)):
        return True
    k = p.k
    text = p.done()
    arrow_command(p, text[k.value_start :].strip(), text)
    return True


def read_arrow_fence(p: Cursor, k: Construct, body: str, text: str, closed: bool) -> None:
    """The fence after WRITE FILE (the file's content) or RUN COMMAND (the command)."""
    if not closed:
        unclosed_fence(p, k, text)
    elif k.mode == "write":
        p.call("write_file", {"path": k.name, "content": body}, NAME, text)
    else:
        arrow_command(p, body.strip(), text)


def arrow_command(p: Cursor, command: str, raw: str) -> None:
    """A command as a `run_command` call, or `run_tests` for pytest."""
    if not command:
        p.error("RUN COMMAND without a command; nothing was run", raw)
        return
    tests = _PYTEST.match(command) and "run_tests" in p.tools
    name = "run_tests" if tests else "run_command"
    p.call(name, {"command": command}, "arrow_block", raw)


class ArrowBlock(Syntax):
    """`>>> RUN COMMAND` and its line or fence, `>>> WRITE FILE: path` and its fence."""

    name = NAME
    example = DESCRIPTION
    models = "models prompted with Toolgate's arrow-block examples"
    forms = ((NAME, DESCRIPTION),)
    # the arrow line is read whole: a chunk that ends inside it is stored until it ends
    openings = (AtLineStart((">>>",), lambda p, s: at_arrow(p), holds_line=True),)
