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
from collections.abc import Mapping, Sequence
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
from toolgate.calls.json_value import CALL_PREFIX, CALL_VIABLE, CLOSE_LINE_OR_TAG
from toolgate.calls.prose import (
    at_backtick,
    fence_lang,
    fence_line,
    inline_code,
    open_fence,
    st_fence,
)
from toolgate.calls.records import CallParseError, Item, ParsedCall, ParseResult
from toolgate.calls.syntaxes import (
    Syntax,
    aider,
    arrow,
    fenced_json,
    hermes,
    llama_json,
    mistral,
    phi4_mini,
    pythonic,
    qwen_xml,
    registered,
    short_tag,
    tag,
    xml_element,
)

SYNTAXES: dict[str, str] = {
    tag.NAME: tag.DESCRIPTION,
    short_tag.NAME: short_tag.DESCRIPTION,
    arrow.NAME: arrow.DESCRIPTION,
    hermes.NAME: hermes.DESCRIPTION,
    qwen_xml.NAME: qwen_xml.DESCRIPTION,
    mistral.NAME: mistral.DESCRIPTION,
    mistral.V11: mistral.V11_DESCRIPTION,
    llama_json.NAME: llama_json.DESCRIPTION,
    pythonic.NAME: pythonic.DESCRIPTION,
    xml_element.NAME: xml_element.DESCRIPTION,
    fenced_json.NAME: fenced_json.DESCRIPTION,
    phi4_mini.NAME: phi4_mini.DESCRIPTION,
    aider.NAME: aider.DESCRIPTION,
}


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


# What at a line start may open a call, an arrow block or a fence in prose; what may close a
# plain fence. The chunk after one that ends at a line start is checked from there.
# Phi-4-mini's `functools[` opens a call at a line start too, or its start cut by the chunk's end
_FUNCTOOLS_PARTIAL = r"f(?:u(?:n(?:c(?:t(?:o(?:o(?:l(?:s)?)?)?)?)?)?)?)?"
_LINE_OPENER = r"[ \t]*+(?:[>{\[~`]|functools\[|" + _FUNCTOOLS_PARTIAL + r"\Z)"
_BLANKS_AND_OPENERS = frozenset(" \t>{[~`f")
_PROSE_LINE = re.compile(_LINE_OPENER)
_PROSE_LINES = re.compile(r"\n" + _LINE_OPENER)
_FENCE_LINE = re.compile(r"[ \t]*+[~`]")
_FENCE_LINES = re.compile(r"\n[ \t]*+[~`]")
_LINE_START = re.compile(r"[ \t]*(>>>|\{|\[|`{3,}|~{3,}|functools\[)")
_LINE_START_PARTIAL = re.compile(r"[ \t]*(?:>{1,2}|`{1,2}|~{1,2}|" + _FUNCTOOLS_PARTIAL + ")?")
_NL_TAIL = re.compile(r"[ \t]*(?:>{1,2}|" + _FUNCTOOLS_PARTIAL + ")?")
_WORD = re.compile(r"[\w.-]*")
# A fence or `>>>` line begun and not ended, with nothing that could complete an item on it.
_LINE_BEGUN = re.compile(r"[ \t]*(?:`{3,}|~{3,}|>{1,3})[^<>\[\]{}=`\n]{0,40}")


class StreamingCallParser(Cursor):
    """Feed the model's text chunk by chunk; get each call the moment it closes."""

    __slots__ = (
        "_at_ls",
        "_delimited",
        "_delimited_re",
        "_finished",
        "_lt_literals",
        "_lt_prefixes",
        "_lt_span",
        "_opens",
        "_pending",
        "_quiet",
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

        `syntaxes` are the delimited syntaxes read besides the core ones; by default the
        built-in families and those installed under the `toolgate.syntaxes` entry points.
        """
        super().__init__(
            tools,
            st_prose,
            allow_deprecated_syntax=allow_deprecated_syntax,
            max_call_chars=max_call_chars,
            syntaxes=registered() if syntaxes is None else syntaxes,
        )
        self._delimited = {lit: s for s in self.syntaxes.values() for lit in s.opens}
        openings = sorted(self._delimited, key=len, reverse=True)
        self._delimited_re = re.compile("|".join(re.escape(lit) for lit in openings) or "(?!)")
        self._finished = False
        self._pending: list[str] = []  # prose `feed` stored without running the machinery
        # In prose or a plain fence with nothing held, what at a line start may matter.
        self._quiet: re.Pattern[str] | None = None
        self._at_ls = True  # the text so far ends at a line start
        self._wait: re.Pattern[str] | None = None  # see `feed`
        names = sorted(self.tools, key=len, reverse=True)
        element = "|".join(
            re.escape(name) for name in names if xml_element.XML_NAME.fullmatch(name)
        )
        # No named groups: they defeat the regex engine's first-character scan.
        self._trigger = re.compile(
            r"`[^`\n]{1,900}`(?!`)|`|<(?:tool[\s:>_]|function=|\|python_tag\|>"
            + (f"|(?:{element})>" if element else "")
            + "".join("|" + re.escape(lit[1:]) for lit in openings)
            + r")|\[TOOL_CALLS\]|\n(?=[ \t]*(?:>>>|[{\[~`]|functools\[))"
        )
        self._lt_literals = [
            "<tool_",
            "<tool:",
            "<tool>",
            "<function=",
            llama_json.PYTHON_TAG,
            *openings,
        ]
        self._lt_literals += [f"<{name}>" for name in names if xml_element.XML_NAME.fullmatch(name)]
        self._lt_span = max(len(lit) for lit in self._lt_literals)
        # What opens a call in prose, or may still grow into an opening at the end of a chunk.
        self._opens = re.compile(
            "|".join(re.escape(lit) for lit in [*self._lt_literals, "<tool", "[TOOL_CALLS]"])
        )
        # Every opening cut by the end of the text, to hold back until the next chunk.
        self._lt_prefixes = {
            lit[:i] for lit in [*self._lt_literals, "[TOOL_CALLS]"] for i in range(1, len(lit) + 1)
        }

    def feed(self, chunk: str) -> list[Item]:
        """Add text; return the calls and errors that closed in it, in order."""
        # A chunk in which no call can open or close is only stored, and read with the next
        # one that may: this keeps small chunks cheap (benchmarks/README.md).
        quiet = self._quiet
        if quiet is not None:
            if "<" not in chunk and "[" not in chunk and chunk and not self._at_ls:
                # No opening, no line start at its beginning: the common case, kept cheap.
                if "\n" not in chunk:
                    self._pending.append(chunk)
                    return []
                if not (_FENCE_LINES if quiet is _FENCE_LINE else _PROSE_LINES).search(chunk):
                    self._pending.append(chunk)  # and no line in it starts with an opener
                    self._at_ls = chunk.rstrip(" \t")[-1] == "\n"
                    return []
            inert = self._inert(chunk)
            if inert:
                self._pending.append(chunk)
                tail = chunk.rstrip(" \t")
                self._at_ls = tail[-1] == "\n" if tail else self._at_ls
                return []
            if inert is None or quiet is _PROSE_LINE and self._starts_a_line(chunk):
                # It ends in an opening cut short, or a fence or `>>>` line not ended:
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
        if self._at_ls and chunk[0] in _BLANKS_AND_OPENERS:
            if (_FENCE_LINE if fence else _PROSE_LINE).match(chunk):
                return False
        if "\n" in chunk and (_FENCE_LINES if fence else _PROSE_LINES).search(chunk):
            return False
        if fence:
            return True
        if "<" not in chunk and "[" not in chunk:
            return True
        if self._opens.search(chunk):
            return False
        cut = max(chunk.rfind("<"), chunk.rfind("["))
        return None if chunk[cut:] in self._lt_prefixes else True

    def _starts_a_line(self, chunk: str) -> bool:
        """Whether `chunk`, in prose, only starts a fence or `>>>` line that it does not end."""
        j = chunk.rfind("\n")
        if j < 0 and not self._at_ls or j >= 0 and self._inert(chunk[: j + 1]) is not True:
            return False
        return _LINE_BEGUN.fullmatch(chunk, j + 1) is not None

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
                quiet = _PROSE_LINE
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
            return mistral.open_mistral(self)

    def _prose_hold(self, pos: int) -> int:
        buf = self.buf
        n = len(buf)
        tail = buf[max(pos, n - self._lt_span) :]
        if "<" not in tail and "[" not in tail and "\n" not in tail and tail[-1:] not in " \t>":
            return n  # the usual case: the text ends in the middle of plain prose
        hold = n
        j = buf.rfind("\n", pos)
        if j >= 0 and _NL_TAIL.fullmatch(buf, j + 1):
            hold = j + 1
        k = buf.rfind("[", max(pos, n - 11))
        if k >= 0 and "[TOOL_CALLS]".startswith(buf[k:]):
            hold = min(hold, k)
        k = buf.rfind("<", max(pos, n - self._lt_span))
        if k >= 0 and k < hold:
            tail = buf[k:]
            if tail in self._lt_prefixes:
                hold = k
        return hold

    def _at_line_start(self) -> bool | None:
        buf, pos, n = self.buf, self.pos, len(self.buf)
        m = _LINE_START.match(buf, pos)
        if m is None:
            if not self.eof and _LINE_START_PARTIAL.fullmatch(buf, pos):
                return False
            return None
        tok, s = m.group(1), m.start(1)
        if tok[0] in "`~":
            if m.end() == n and not self.eof:
                return False
            return self._at_fence(m)
        if tok == ">>>":
            return arrow.at_arrow(self)
        if tok[0] == "f":  # Phi-4-mini: `functools[` and a JSON list of calls, alone on its line
            return phi4_mini.open_functools(self, s)
        if tok == "{":
            got = self.classify(CALL_PREFIX, CALL_VIABLE, s)
            if got is ...:
                return False
            if got is None or got.group(1) or got.group(2) not in self.tools:
                return None
            llama_json.open_line_json(self, s)
            return True
        # "[": Mistral marker, a JSON list of calls, or a pythonic call list
        head = buf[s : s + 12]
        if head == mistral.MARKER:
            return None
        if mistral.MARKER.startswith(head) and not self.eof:
            return False
        got = self.classify(CALL_PREFIX, CALL_VIABLE, s)
        py = self.classify(pythonic.PY_PREFIX, pythonic.PY_VIABLE, s)
        if got is not None and got is not ... and got.group(1):
            if got.group(2) not in self.tools:
                return None
            llama_json.open_line_json(self, s)
            return True
        if py is not None and py is not ...:
            if py.group(1) not in self.tools:
                return None
            self.prose_to(s)
            pythonic.open_pythonic(self)
            return True
        if got is ... or py is ...:
            return False
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
        if buf.startswith("<|", pos) or (pos + 1 == n and not self.eof):
            if buf.startswith(llama_json.PYTHON_TAG, pos):
                return llama_json.open_python_tag(self)
            if llama_json.PYTHON_TAG.startswith(buf[pos:]) and not self.eof:
                return False
            if buf.startswith("<|", pos):
                self.prose_to(pos + 2)
                return True
        m = _WORD.match(buf, pos + 1)
        assert m is not None  # it matches the empty text
        end = m.end()
        if end >= n and not self.eof:
            if end - pos > WINDOW:
                self.prose_to(pos + 1)
                return True
            return False
        word = m.group()
        nxt = buf[end] if end < n else ""
        if word == "tool" and nxt == ":":
            return short_tag.open_short(self)
        if word == "tool" and (nxt == ">" or nxt.isspace()):
            return tag.open_tag(self)
        if word == "tool_call" and nxt == ">":
            return hermes.open_hermes(self, end + 1)
        if word == "function" and nxt == "=":
            return qwen_xml.open_function(self, wrapped=False)
        if word in self.tools and nxt == ">":
            return xml_element.open_element(self, word, end + 1)
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
        if nl >= 0 and "edit_file" in self.tools:
            buf = self.buf
            seg = buf[nl + 1 : nl + 1 + WINDOW]
            edit = aider.opens_edit(seg, self.eof or len(seg) >= WINDOW)
            if edit is None:
                return False
            if edit:
                # constructs start after the indentation, however the indentation arrived
                self.prose_to(m.start(1))
                self.say()  # Aider names the file on the line before the fence
                k = self.start("SEARCH/REPLACE block", st_fence)
                k.name = aider.clean_path(self.sink.last_line()) or self.edit_path
                k.mode = "edit"
                return open_fence(self, k, m, nl, lang, aider.read_edit_fence)
        if lang in fenced_json.LANGS:
            self.prose_to(m.start(1))
            k = self.start(f"```{lang}", st_fence)
            k.mode = "call"
            k.decide = fenced_json.decide_call_fence
            return open_fence(self, k, m, nl, lang, fenced_json.read_call_fence)
        return open_fence(self, Construct("fence"), m, nl, lang, None)


# Prose is the driver's own state: the method, called as the states are, with the cursor.
st_prose = cast(State, StreamingCallParser.read_prose)
