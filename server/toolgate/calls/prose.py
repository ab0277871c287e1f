"""Prose rules: inline code, code fences, and the fences that hold calls.

Inline code and plain fences are prose, shown as written: a call inside them is an example,
never run. A fence whose language or first line says it holds calls (```` ```json ````,
```` ```tool ````, Aider's SEARCH/REPLACE, the arrow block's WRITE FILE) is read as a
construct: its body is held until the closing fence line, then handed to the construct's
`on_close`. A fence closes on a line holding only a run of its character at least as long as
the opening's, as in CommonMark.
"""

from __future__ import annotations

import re

from toolgate.calls.cursor import (
    CLOSE_LINE,
    WINDOW,
    BodyReader,
    Construct,
    Cursor,
    waits_for,
)

INLINE_WINDOW = 1000  # how far on one line an inline code span may reach
BACKTICKS = re.compile(r"`+")
FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})")
_FENCE_CANDIDATE = {c: re.compile(r"\n(?=[ \t]*" + re.escape(c * 3) + ")") for c in "`~"}
_FENCE_CLOSE = {c: re.compile(r"[ \t]*(" + re.escape(c) + r"{3,})[ \t]*\r?") for c in "`~"}
FENCE_CLOSE_VIABLE = {c: re.compile(r"[ \t]*" + re.escape(c) + r"*[ \t]*\r?") for c in "`~"}
# What may close a plain fence: a run of its character lies in one chunk or starts one.
CLOSE_FENCE_RUN = {c: re.compile(f"\\n|^{c}|{c}{c}") for c in "`~"}


def inline_code(run: str, info: str) -> bool:
    """Whether a line-start run of backticks opens inline code rather than a fence."""
    return run[0] == "`" and "`" in info


def closes_fence(fchar: str, flen: int, line: str) -> bool:
    """Whether a whole body line closes a fence: its character's run, as long, and blanks."""
    c = _FENCE_CLOSE[fchar].fullmatch(line)
    return c is not None and len(c.group(1)) >= flen


def fence_lang(info: str) -> str:
    """A fence's language: the first word of its info string."""
    return (info.strip().split() or [""])[0].lower()


def fence_line(p: Cursor, m: re.Match[str]) -> tuple[int, str] | None:
    """The line feed ending a fence's opening line (-1: none) and its info string; None: wait."""
    buf, n = p.buf, len(p.buf)
    nl = buf.find("\n", m.end(), m.end() + WINDOW)
    if nl < 0:
        if not p.eof and n - m.end() < WINDOW:
            return None
        nl = -1
    return nl, buf[m.end() : nl if nl >= 0 else min(n, m.end() + WINDOW)]


def open_fence(
    p: Cursor, k: Construct, m: re.Match[str], nl: int, lang: str, on_close: BodyReader | None
) -> bool:
    """Read the fence opened by `m` as `k`: prose when `on_close` is None, else a construct."""
    run = m.group(1)
    k.fchar, k.flen, k.lang = run[0], len(run), lang
    k.cand_re = _FENCE_CANDIDATE[run[0]]
    k.on_close = on_close
    if on_close is None:
        k.mode = "plain"
    end = nl + 1 if nl >= 0 else m.end()
    k.body_ls = nl >= 0
    p.k = k
    p.state = st_fence
    if on_close is None:
        p.prose_to(end)
    elif not p.take(end):
        return True
    k.body_start = p.acc_n
    return True


def unclosed_fence(p: Cursor, k: Construct, text: str) -> None:
    """The error for a fence that holds a call and never closed."""
    p.error(
        f"unclosed code fence ({k.what}): the output ended before its closing "
        f"{k.fchar * k.flen}; nothing was run",
        text,
    )


def at_backtick(p: Cursor) -> bool:
    """At a run of backticks in prose: inline code up to the same run on its line, or prose."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    m = BACKTICKS.match(buf, pos)
    assert m is not None  # called at a backtick
    run = m.end() - pos
    if m.end() >= n and not p.eof:
        return False
    limit = m.end() + INLINE_WINDOW
    nl = buf.find("\n", m.end(), limit)
    if nl < 0:
        if n < limit and not p.eof:
            return False
        nl = min(n, limit)
    for c in BACKTICKS.finditer(buf, m.end(), nl):
        if c.end() - c.start() == run:
            p.prose_to(c.end())
            return True
    p.prose_to(m.end())
    return True


def fence_close_at(p: Cursor, k: Construct) -> int | None | bool:
    """At a body line start: end of a closing fence line, None if not one, False for more."""
    buf, pos = p.buf, p.pos
    nl = buf.find("\n", pos)
    line = buf[pos:] if nl < 0 else buf[pos:nl]
    if nl < 0 and not p.eof:
        if len(line) < WINDOW and FENCE_CLOSE_VIABLE[k.fchar].fullmatch(line):
            return False
        return None
    if not closes_fence(k.fchar, k.flen, line):
        return None
    return pos + len(line) - (1 if line.endswith("\r") else 0)


def fence_take(p: Cursor, k: Construct, end: int) -> bool:
    """Move the fence's text on: as prose for a plain fence, else into the construct."""
    if k.mode == "plain":
        p.prose_to(end)
        return True
    return p.take(end)


@waits_for(lambda k: CLOSE_FENCE_RUN[k.fchar] if k.mode == "plain" else CLOSE_LINE)
def st_fence(p: Cursor) -> bool:
    """Inside a fence: hand on its lines until a closing fence line."""
    k = p.k
    buf, n = p.buf, len(p.buf)
    while True:
        pos = p.pos
        if k.decide is not None and not k.decided and not k.decide(p, k):
            return True
        if pos >= n and not p.eof:
            return False
        if k.body_ls and pos < n:
            end = fence_close_at(p, k)
            if end is False:
                return False
            if end is not None and end is not True:
                return close_fence(p, k, int(end))
        elif k.body_ls and p.eof:
            return close_fence(p, k, -1)
        m = k.cand_re.search(buf, pos) if k.cand_re else None
        if m is not None:
            if not fence_take(p, k, m.start() + 1):
                return True
            k.body_ls = True
            continue
        if p.eof:
            if not fence_take(p, k, n):
                return True
            return close_fence(p, k, -1)
        j = buf.rfind("\n", pos)
        hold = n
        if j >= 0 and FENCE_CLOSE_VIABLE[k.fchar].fullmatch(buf, j + 1):
            hold = j + 1
        if hold <= pos:
            return False
        if not fence_take(p, k, hold):
            return True
        k.body_ls = buf[hold - 1] == "\n"
        return False


def close_fence(p: Cursor, k: Construct, end: int) -> bool:
    """The fence closed at `end` (-1: the output ended inside it)."""
    if k.on_close is None:
        if end >= 0:
            p.prose_to(end)
        p.k = Construct("prose")
        p.state = p.idle
        return True
    body_end = p.acc_n
    if end >= 0 and not p.take(end):
        return True
    text = p.done()
    k.on_close(p, k, text[k.body_start : body_end], text, end >= 0)
    return True
