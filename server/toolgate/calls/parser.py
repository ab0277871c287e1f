"""The streaming driver: finds where a call may open in prose and hands the text to its syntax.

The parser holds only the text not yet decided. Prose is searched with one compiled pattern from
a resume position, so the total work is linear in the length of the answer; where something
may open a call, the syntax that owns the opening reads on with its states (see `cursor.py`),
holding the construct back until it is decided. Every decision depends on the text alone,
never on where a chunk ended. The syntaxes live in `syntaxes/`, one module each; the rules for
inline code and fences in `prose.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from toolgate.calls.cursor import (
    CLOSERS,
    HOLD_LIMIT,
    MAX_CALL_CHARS,
    WINDOW,
    Construct,
    Cursor,
    State,
)
from toolgate.calls.delimited import enter, st_delimited
from toolgate.calls.json_value import CLOSE_LINE_OR_TAG
from toolgate.calls.openings import AfterLt, AtFence, AtLineStart, InProse, Opening
from toolgate.calls.prose import (
    at_backtick,
    fence_lang,
    fence_line,
    inline_code,
    open_fence,
    st_fence,
)
from toolgate.calls.records import CallParseError, Item, ParsedCall, ParseResult
from toolgate.calls.syntaxes import Syntax, registered
from toolgate.calls.syntaxes.content_ended import CONTENT_ENDED


def parse_text(
    text: str, tools: Mapping[str, Mapping[str, Any]], *, allow_deprecated_syntax: bool = True
) -> ParseResult:
    """Parse a whole answer at once."""
    parser = StreamingCallParser(tools, allow_deprecated_syntax=allow_deprecated_syntax)
    return read_whole(parser, text)


def read_whole(parser: StreamingCallParser, text: str) -> ParseResult:
    """Feed a whole answer to `parser` and finish it."""
    items = parser.feed(text) + parser.finish()
    return ParseResult(
        calls=[i for i in items if isinstance(i, ParsedCall)],
        content=parser.content,
        errors=[i for i in items if isinstance(i, CallParseError)],
    )


# What opens or closes a plain fence at a line start: the driver's own, with inline code.
_FENCE_LINE = re.compile(r"[ \t]*+[~`]")
_FENCE_LINES = re.compile(r"\n[ \t]*+[~`]")
_FENCE_RUNS = ("```", "~~~")
_WORD = re.compile(r"[\w.-]*")


def _alternatives(texts: list[str]) -> str:
    """A regex matching any of `texts` (the longest first), or nothing when there are none."""
    texts = sorted(set(texts), key=len, reverse=True)
    return "|".join(re.escape(t) for t in texts) or "(?!)"


def _holds_any(chars: str) -> Callable[[str], bool]:
    """Whether a text holds any of `chars`.

    Called on every chunk: two `in` tests cost a third of a regex search, and prose has two
    such characters unless plugins add more (`<` and the first of `[TOOL_CALLS]`).
    """
    if len(chars) == 1:
        return chars.__contains__
    if len(chars) == 2:
        first, second = chars[0], chars[1]
        return lambda text: first in text or second in text
    search = re.compile("[" + re.escape(chars) + "]").search
    return lambda text: search(text) is not None


def _starts(texts: list[str]) -> list[str]:
    """Every proper, non-empty start of each of `texts`."""
    return [t[:i] for t in texts for i in range(1, len(t))]


class StreamingCallParser(Cursor):
    """Feed the model's text chunk by chunk; get each call the moment it closes."""

    __slots__ = (
        "_after_lt",
        "_at_fence_openings",
        "_at_line",
        "_at_ls",
        "_blanks_and_openers",
        "_delimited",
        "_delimited_re",
        "_finished",
        "_in_prose",
        "_line_begun",
        "_line_start",
        "_line_start_partial",
        "_lt_prefixes",
        "_lt_span",
        "_mark_chars",
        "_marked",
        "_nl_tail",
        "_opens",
        "_pending",
        "_prose_line",
        "_prose_lines",
        "_quiet",
        "_tail_chars",
        "_trigger",
        "_wait",
    )

    def __init__(
        self,
        tools: Mapping[str, Mapping[str, Any]],
        *,
        allow_deprecated_syntax: bool = True,
        max_call_chars: int = MAX_CALL_CHARS,
        syntaxes: Sequence[Syntax] | None = None,
    ) -> None:
        """Read calls to `tools` (name → argument schema) in every syntax.

        `syntaxes` are the syntaxes read besides the content-ended ones every parser reads;
        by default the built-in families and those installed under the `toolgate.syntaxes`
        entry points.
        """
        super().__init__(
            tools,
            st_prose,
            allow_deprecated_syntax=allow_deprecated_syntax,
            max_call_chars=max_call_chars,
            syntaxes=registered() if syntaxes is None else syntaxes,
        )
        self._delimited = {lit: s for s in self.syntaxes.values() for lit in s.opens}
        delimited = sorted(self._delimited, key=len, reverse=True)
        self._delimited_re = re.compile(_alternatives(delimited))
        self._finished = False
        self._pending: list[str] = []  # prose `feed` stored without running the machinery
        # In prose or a plain fence with nothing held, what at a line start may matter.
        self._quiet: re.Pattern[str] | None = None
        self._at_ls = True  # the text so far ends at a line start
        self._wait: re.Pattern[str] | None = None  # see `feed`

        openings = self._declared_openings()
        after_lt = [o for o in openings if isinstance(o, AfterLt)]
        lines = [o for o in openings if isinstance(o, AtLineStart)]
        self._in_prose = [o for o in openings if isinstance(o, InProse)]
        self._at_fence_openings = [o for o in openings if isinstance(o, AtFence)]
        self._after_lt = [(re.compile("<" + o.pattern), o.read) for o in after_lt]
        self._at_line = lines
        line_literals = [lit for o in lines for lit in o.literals]
        self._compile_prose(after_lt, delimited, line_literals)
        self._compile_line_starts(lines, line_literals)

    def _declared_openings(self) -> list[Opening]:
        """The openings the syntaxes declare; those built from tool names, built for our tools."""
        openings: list[Opening] = []
        names = list(self.tools)
        declaring: list[Syntax | type[Syntax]] = [*CONTENT_ENDED, *self.syntaxes.values()]
        for syntax in declaring:
            for declared in syntax.openings:
                got = declared if isinstance(declared, Opening) else declared(names)
                if got is not None:
                    openings.append(got)
        return openings

    def _compile_prose(
        self, after_lt: list[AfterLt], delimited: list[str], line_literals: list[str]
    ) -> None:
        """The patterns that find, in prose, where something may open."""
        in_prose = [o.literal for o in self._in_prose]
        # Prose: what may open something; one pattern, searched from a resume position.
        # No named groups: they defeat the regex engine's first-character scan.
        self._trigger = re.compile(
            r"`[^`\n]{1,900}`(?!`)|`|<(?:"
            + "|".join(
                [o.stop or o.pattern for o in after_lt] + [re.escape(lit[1:]) for lit in delimited]
            )
            + ")"
            + "".join("|" + re.escape(lit) for lit in in_prose)
            + r"|\n(?=[ \t]*(?:[~`]|"
            + _alternatives(line_literals)
            + "))"
        )
        self._mark_chars = "<" + "".join(dict.fromkeys(lit[0] for lit in in_prose))
        self._marked = _holds_any(self._mark_chars)
        lt_literals = [*delimited, *(lit for o in after_lt for lit in o.literals)]
        self._lt_span = max(len(lit) for lit in lt_literals)
        # What opens a call in prose, or may still grow into an opening at the end of a chunk.
        self._opens = re.compile(_alternatives([*lt_literals, *in_prose]))
        # Every opening cut by the end of the text, to hold back until the next chunk.
        self._lt_prefixes = {
            lit[:i] for lit in [*lt_literals, *in_prose] for i in range(1, len(lit) + 1)
        }

    def _compile_line_starts(self, lines: list[AtLineStart], line_literals: list[str]) -> None:
        """The patterns that read what a line starts with: a fence or a call's opening."""
        # A literal that starts with a word character counts whole (or cut by the chunk's
        # end); one that starts with another character, from that character.
        firsts = "".join(dict.fromkeys(lit[0] for lit in line_literals if not lit[0].isalnum()))
        worded = [lit for lit in line_literals if lit[0].isalnum()]
        opener = (
            r"[ \t]*+(?:["
            + re.escape(firsts + "~`")
            + "]"
            + "".join("|" + re.escape(lit) for lit in worded)
            + (f"|(?:{_alternatives(_starts(worded))})\\Z" if worded else "")
            + ")"
        )
        self._prose_line = re.compile(opener)
        self._prose_lines = re.compile(r"\n" + opener)
        self._blanks_and_openers = frozenset(" \t~`" + "".join(lit[0] for lit in line_literals))
        self._line_start = re.compile(r"[ \t]*(`{3,}|~{3,}|" + _alternatives(line_literals) + ")")
        starts = _starts(line_literals)
        self._line_start_partial = re.compile(
            r"[ \t]*(?:" + _alternatives(starts + _starts(list(_FENCE_RUNS))) + ")?"
        )
        self._nl_tail = re.compile(r"[ \t]*(?:" + _alternatives(starts) + ")?")
        self._tail_chars = " \t" + "".join(dict.fromkeys(t[-1] for t in starts))
        # A fence, or a line read whole, begun and not ended, with nothing that could complete
        # an item on it.
        held = [lit for o in lines if o.holds_line for lit in o.literals]
        held += _starts(held)
        self._line_begun = re.compile(
            r"[ \t]*(?:`{3,}|~{3,}|" + _alternatives(held) + r")[^<>\[\]{}=`\n]{0,40}"
        )

    def feed(self, chunk: str) -> list[Item]:
        """Add text; return the calls and errors that closed in it, in order."""
        # A chunk in which no call can open or close is only stored, and read with the next
        # one that may: this keeps small chunks cheap (benchmarks/README.md).
        quiet = self._quiet
        if quiet is not None:
            if chunk and not self._at_ls and "\n" not in chunk and not self._marked(chunk):
                # No opening, no line start: the common case, kept cheap.
                self._pending.append(chunk)
                return []
            inert = self._inert(chunk)
            if inert:
                self._pending.append(chunk)
                tail = chunk.rstrip(" \t")
                self._at_ls = tail[-1] == "\n" if tail else self._at_ls
                return []
            if inert is None or quiet is self._prose_line and self._starts_a_line(chunk):
                # It ends in an opening cut short, or a fence or a line read whole not ended:
                # nothing can be decided before more text, so wait as a held run would.
                self._pending.append(chunk)
                self._quiet, self._at_ls, self._wait = None, False, CLOSE_LINE_OR_TAG
                return []
        wait = self._wait
        if wait is not None and len(self.buf) + len(chunk) < HOLD_LIMIT and not wait.search(chunk):
            # What is held can only complete on one of these characters; the look-ahead
            # windows are longer than the limit, so storing the chunk delays no decision.
            self.buf += chunk
            return []
        if self._finished:
            raise RuntimeError("feed() after finish()")
        if chunk:
            self.buf += chunk
            self._run()
        return self._drain()

    def finish(self) -> list[Item]:
        """End of output: decide everything held back; an unclosed call is an error."""
        if not self._finished:
            self.eof = True
            self._run()
            if self.state is not st_prose or self.pos < len(self.buf):
                # Defensive: every state resolves at end of output; never lose text silently.
                rest = self.construct_text() + self.buf[self.pos :]
                self.buf, self.pos = "", 0
                self.error("the output ended inside an unfinished call", rest)
                self.state = st_prose
            self.say()
            self.sink.close()
            self._finished = True
        return self._drain()

    def take_content(self) -> str:
        """Visible prose produced since the last call of this method."""
        if self._pending and not self._finished:
            self._run()  # what `feed` only stored completes nothing: this emits no item
        self.say()
        return self.sink.take()

    @property
    def content(self) -> str:
        """All visible prose so far."""
        if self._pending and not self._finished:
            self._run()
        self.say()
        return self.sink.text()

    def _inert(self, chunk: str) -> bool | None:
        """Whether, in prose or a plain fence with nothing held, `chunk` can change nothing.

        None: nothing, unless what follows completes the opening it ends with.

        Only a line start can open a fence or a line-start call or close a fence; in prose, an
        opening (or the start of one cut by the chunk's end) can open a call. Inline code only
        hides calls, so it waits for the next chunk that holds an opening.
        """
        if not chunk:
            return False
        fence = self._quiet is _FENCE_LINE
        if self._at_ls and chunk[0] in self._blanks_and_openers:
            if (_FENCE_LINE if fence else self._prose_line).match(chunk):
                return False
        if "\n" in chunk and (_FENCE_LINES if fence else self._prose_lines).search(chunk):
            return False
        if fence:
            return True
        if not self._marked(chunk):
            return True
        if self._opens.search(chunk):
            return False
        cut = max(map(chunk.rfind, self._mark_chars))
        return None if chunk[cut:] in self._lt_prefixes else True

    def _starts_a_line(self, chunk: str) -> bool:
        """Whether `chunk`, in prose, only starts a fence or a held line that it does not end."""
        j = chunk.rfind("\n")
        if j < 0 and not self._at_ls or j >= 0 and self._inert(chunk[: j + 1]) is not True:
            return False
        return self._line_begun.fullmatch(chunk, j + 1) is not None

    def _run(self) -> None:
        if self._pending:
            self.buf = "".join(self._pending) + self.buf  # nothing was held when it was stored
            self._pending = []
        while self.state(self):
            pass
        self.keep_prose()  # handed on with the next stretch, or when the content is asked for
        if self.pos:
            self.prev = self.buf[self.pos - 1]
            self.buf = self.buf[self.pos :]
            self.pos = 0
        st = self.state
        quiet = None
        if not self.buf and not self.eof:
            if st is st_prose:
                quiet = self._prose_line
            elif st is st_fence and self.k.mode == "plain":
                quiet = _FENCE_LINE
        self._quiet = quiet
        self._at_ls = self.k.body_ls if st is st_fence else self.prev == "\n"
        self._wait = self._closers(st) if quiet is None and not self.eof else None

    def _closers(self, st: State) -> re.Pattern[str] | None:
        """The characters on which what is held (in state `st`) may complete an item, if any."""
        if self.acc_n + 2 * HOLD_LIMIT > self.cap:
            return None
        if st is st_prose:
            return CLOSE_LINE_OR_TAG  # held prose (inline code, a line start) ends at a line end
        closers = CLOSERS.get(st)
        return closers(self.k) if closers is not None else None

    def _drain(self) -> list[Item]:
        items, self.items = self.items, []
        return items

    def read_prose(self) -> bool:
        """Prose up to where a call may open; True when something was decided."""
        buf, pos = self.buf, self.pos
        n = len(buf)
        if pos >= n:
            return False
        if (buf[pos - 1] if pos else self.prev) == "\n":
            decided = self._at_line_start()
            if decided is not None:
                return decided
        entry = pos
        search = self._trigger.search
        while True:
            m = search(buf, pos)
            if m is None:
                # Prose up to what may still open a call; nothing more without more text.
                self.prose_to(n if self.eof else self._prose_hold(pos))
                return False
            kind = buf[m.start()]
            if kind == "`" and m.end() - m.start() > 1:
                if m.end() < n or self.eof:  # a whole inline code span: an example, prose
                    pos = m.end()
                    continue
            if kind == "\n":
                pos = m.start() + 1
                self.prose_to(pos)
                decided = self._at_line_start()
                if decided is None:
                    continue
                return True
            i = m.start()
            if i > entry:
                self.prose_to(i)
                return True
            if kind == "<":
                return self._at_lt()
            if kind == "`":
                return at_backtick(self)
            return next(o.read for o in self._in_prose if buf.startswith(o.literal, i))(self)

    def _prose_hold(self, pos: int) -> int:
        """Where the prose from `pos` must stop: before what may still grow into an opening."""
        buf = self.buf
        n = len(buf)
        start = n - self._lt_span
        if start < pos:
            start = pos
        hold = n
        if buf[-1:] in self._tail_chars or "\n" in buf[start:]:
            j = buf.rfind("\n", pos)
            if j >= 0 and self._nl_tail.fullmatch(buf, j + 1):
                hold = j + 1
        for o in self._in_prose:
            lit = o.literal
            k = buf.rfind(lit[0], max(pos, n - len(lit) + 1))
            if k >= 0 and k < hold and lit.startswith(buf[k:]):
                hold = k
        k = buf.rfind("<", start)
        if k >= 0 and k < hold and buf[k:] in self._lt_prefixes:
            hold = k
        return hold

    def _at_line_start(self) -> bool | None:
        buf, pos, n = self.buf, self.pos, len(self.buf)
        m = self._line_start.match(buf, pos)
        if m is None:
            if not self.eof and self._line_start_partial.fullmatch(buf, pos):
                return False
            return None
        tok, s = m.group(1), m.start(1)
        if tok[0] in "`~":
            if m.end() == n and not self.eof:
                return False
            return self._at_fence(m)
        # The first syntax that takes the opening reads it; None: not that syntax's.
        for o in self._at_line:
            if buf.startswith(o.literals, s):
                decided = o.read(self, s)
                if decided is not None:
                    return decided
        return None

    def _at_lt(self) -> bool:
        buf, pos, n = self.buf, self.pos, len(self.buf)
        d = self._delimited_re.match(buf, pos)
        if d is not None:
            k = self.start(d.group(), st_delimited)
            enter(self, k, self._delimited[d.group()], d.group(), taken=False)
            return self.take(d.end()) or True
        if not self.eof and n - pos <= self._lt_span and buf[pos:] in self._lt_prefixes:
            return False  # an opening cut by the end of the text so far
        for pattern, read in self._after_lt:
            m = pattern.match(buf, pos)
            if m is not None:
                return read(self, m)
        # A name after `<` cut by the end of the text may still grow into an opening.
        w = _WORD.match(buf, pos + 1)
        assert w is not None  # it matches the empty text
        if w.end() >= n and not self.eof and w.end() - pos <= WINDOW:
            return False
        self.prose_to(pos + 1)
        return True

    def _at_fence(self, m: re.Match[str]) -> bool | None:
        """A fence opening at line start: plain fences are prose; some fences may be calls."""
        line = fence_line(self, m)
        if line is None:
            return False
        nl, info = line
        run = m.group(1)
        if inline_code(run, info):
            return None
        lang = fence_lang(info)
        for o in self._at_fence_openings:
            decided = o.read(self, m, nl, lang)
            if decided is not None:
                return decided
        return open_fence(self, Construct("fence"), m, nl, lang, None)


# Prose is the driver's own state: the method, called as the states are, with the cursor.
st_prose = cast(State, StreamingCallParser.read_prose)
