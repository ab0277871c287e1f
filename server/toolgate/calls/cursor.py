"""What every syntax's reader works on: the text held, the construct being read, and the output.

The streaming driver (`toolgate.calls.parser`) finds where a call may open in prose and hands
the text to a syntax's states. A state is a function of the `Cursor`: it moves text from the
buffer into the construct (`take`), and ends the construct with calls (`call`), an error
(`error`) or prose (`as_prose`, `pushback`). It returns True to run the next state at once, and
False when it needs more text. Every decision depends on the text alone, never on where a chunk
ended: that is what keeps the parser's output the same however the answer is cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolgate.calls.arguments import EXPECTED, BadCall, load_json, tool_properties, unknown_tool
from toolgate.calls.content import Content
from toolgate.calls.records import CallParseError, Item, ParsedCall, excerpt

MAX_CALL_CHARS = 4 * 1024 * 1024
WINDOW = 256  # look-ahead used to decide whether something opens a call at all
HOLD_LIMIT = 200  # below every look-ahead window

State = Callable[["Cursor"], bool]
# What reads a construct's body once it closed (a tag, a fence): cursor, construct, body, raw,
# and whether it closed at all (False: the output ended inside it).
BodyReader = Callable[["Cursor", "Construct", str, str, bool], None]

# For each state, the characters on which an item (a call or an error) may complete in it; a
# chunk without one is only stored while that state holds the text (see the driver's `feed`).
# A state whose closers depend on the construct gives a function of it instead.
Closers = Callable[["Construct"], "re.Pattern[str] | None"]
CLOSERS: dict[State, Closers] = {}
CLOSE_TAG = re.compile(r">")
CLOSE_JSON = re.compile(r"[}\])]")
CLOSE_LINE = re.compile(r"\n")


def waits_for(closers: re.Pattern[str] | Closers) -> Callable[[State], State]:
    """Declare the characters on which a state may complete an item (None: on any)."""

    def register(state: State) -> State:
        if isinstance(closers, re.Pattern):
            pattern = closers
            CLOSERS[state] = lambda k: pattern
        else:
            CLOSERS[state] = closers
        return state

    return register


WS = re.compile(r"\s*")


def skip(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where a match of a pattern that matches the empty text ends."""
    m = pattern.match(text, pos)
    assert m is not None
    return m.end()


def json_scanner(close: str | None, nested: str | None) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Regexes for a string-aware scan: outside strings, and inside strings."""
    outside = [r'[{}\[\]"]']
    if close:
        outside.append(re.escape(close))
    if nested:
        outside.append(re.escape(nested) + (r"[\s:>]" if not nested.endswith(">") else ""))
    inside = r'["\\]' + ("|" + re.escape(close) if close else "")
    return re.compile("|".join(outside)), re.compile(inside)


SCAN_PLAIN = json_scanner(None, None)


class Construct:
    """What the parser knows about the construct it is reading.

    One record for every syntax: a construct can change hands while it is read (Hermes's
    `<tool_call>` to Qwen3-Coder's or GLM's reader, an arrow block to its fence), so the fields
    are grouped by the readers that use them rather than split by syntax.
    """

    __slots__ = (
        "after",
        "attr_args",
        "body_ls",
        "body_start",
        "cand_re",
        "child",
        "close",
        "decide",
        "decided",
        "depth",
        "depth_mode",
        "expected",
        "fallback",
        "fchar",
        "flen",
        "hold",
        "impl",
        "in_re",
        "in_str",
        "lang",
        "mode",
        "name",
        "on_close",
        "on_value",
        "open_len",
        "opening",
        "out_re",
        "params",
        "quote",
        "strict",
        "syntax",
        "value_end",
        "value_start",
        "what",
        "wrapped",
    )

    def __init__(self, what: str) -> None:
        self.what = what  # how errors name it
        self.expected = EXPECTED  # the shape errors show as expected
        self.syntax = ""  # recorded as each call's syntax, where the construct says
        self.name: str | None = None
        self.open_len = 0
        self.strict = True
        # string-aware scan
        self.out_re: re.Pattern[str] = SCAN_PLAIN[0]
        self.in_re: re.Pattern[str] = SCAN_PLAIN[1]
        self.hold = 0
        self.close: str | None = None
        self.depth_mode = True
        self.in_str = False
        self.quote = ""
        self.depth = 0
        self.fallback = -1
        self.value_start = 0
        self.value_end = 0
        # element forms
        self.params: list[tuple[str, int, int]] = []
        self.child: str | None = None
        self.wrapped = False
        # delimited syntaxes
        # The syntax reading this construct (a `syntaxes.base.Syntax`, which imports this
        # module): typed where it is read, in `delimited.py`.
        self.impl: Any = None
        self.opening = ""
        # fences
        self.fchar = "`"
        self.flen = 3
        self.lang = ""
        self.mode = "plain"
        self.decided = False
        self.body_ls = True
        self.body_start = 0
        self.cand_re: re.Pattern[str] | None = None
        self.after: str = ""
        self.on_close: BodyReader | None = None
        # What reads the construct once its value (and its line, for a line form) has ended
        self.on_value: Callable[[Cursor, str], None] | None = None
        self.decide: Callable[[Cursor, Construct], bool] | None = None
        self.attr_args = False  # tag arguments written as `args={…}`


class Cursor:
    """The text held back, the construct being read, and the calls, errors and prose decided."""

    __slots__ = (
        "_allow_deprecated",
        "_prose_end",
        "_prose_start",
        "acc",
        "acc_n",
        "buf",
        "cap",
        "edit_path",
        "eof",
        "idle",
        "items",
        "k",
        "passed",
        "pos",
        "prev",
        "sink",
        "state",
        "syntaxes",
        "tools",
    )

    def __init__(
        self,
        tools: Mapping[str, Mapping[str, Any]],
        idle: State,
        *,
        allow_deprecated_syntax: bool,
        max_call_chars: int,
        syntaxes: Sequence[Any],  # `syntaxes.base.Syntax`es, by name in `self.syntaxes`
    ) -> None:
        """Read calls to `tools`; `idle` is the state that reads prose."""
        self.syntaxes = {s.name: s for s in syntaxes}
        self.tools = {str(k): (v if isinstance(v, Mapping) else {}) for k, v in tools.items()}
        self._allow_deprecated = allow_deprecated_syntax
        self.cap = max(4096, max_call_chars)
        self.buf = ""
        self.pos = 0
        self.prev = "\n"
        self.edit_path = ""  # the file of the last SEARCH/REPLACE block
        self.eof = False
        self.items: list[Item] = []
        self.acc: list[str] = []
        self.acc_n = 0
        self.k = Construct("prose")
        self.idle = idle
        self.state = idle
        self.sink = Content()
        # Prose the machinery has passed but not yet handed to the content: one emit per stretch.
        self._prose_start = self._prose_end = 0
        self.passed: list[str] = []  # prose kept by earlier runs, not yet handed on

    def prose_to(self, end: int) -> None:
        """Pass the buffer up to `end` as prose (handed on in one stretch with what touches it)."""
        if end > self.pos:
            if self._prose_end != self.pos:  # not where the last stretch of prose ended
                self.say()
                self._prose_start = self.pos
            self._prose_end = self.pos = end

    def say(self) -> None:
        """Hand the prose passed so far to the content (before anything else is)."""
        stretch = self.buf[self._prose_start : self._prose_end]
        if self.passed:
            self.passed.append(stretch)
            stretch = "".join(self.passed)
            self.passed.clear()
        if stretch:
            self.sink.emit(stretch)
        self._prose_start = self._prose_end = 0

    def keep_prose(self) -> None:
        """Keep the stretch of prose passed so far, to hand on with what follows it."""
        if self._prose_end > self._prose_start:
            self.passed.append(self.buf[self._prose_start : self._prose_end])
        self._prose_start = self._prose_end = 0

    def start(self, what: str, state: State) -> Construct:
        """Begin reading a construct (named `what` in errors) in `state`; its text is empty."""
        self.k = Construct(what)
        self.acc = []
        self.acc_n = 0
        self.state = state
        return self.k

    def take(self, end: int) -> bool:
        """Move buffer text up to `end` into the construct; False when the size cap cut it."""
        if end > self.pos:
            self.acc.append(self.buf[self.pos : end])
            self.acc_n += end - self.pos
            self.pos = end
            if self.acc_n > self.cap:
                self._overflow()
                return False
        return True

    def construct_text(self) -> str:
        """The construct's text taken so far (kept)."""
        text = "".join(self.acc)
        self.acc = [text] if text else []
        return text

    def done(self) -> str:
        """End the construct: its text, and back to prose."""
        text = "".join(self.acc)
        self.acc = []
        self.acc_n = 0
        self.state = self.idle
        return text

    def _overflow(self) -> None:
        text = self.done()
        head, rest = text[: self.cap], text[self.cap :]
        self.error(
            f"call too large: more than {self.cap} characters without closing; "
            "write big files in several smaller edits",
            head,
        )
        self.pushback(rest, head[-1:])

    def pushback(self, text: str, prev: str) -> None:
        """Put decided-against construct text back in front of the buffer, to read as prose."""
        self.say()
        self.buf = text + self.buf[self.pos :]
        self.pos = 0
        self.prev = prev or self.prev

    def as_prose(self, text: str) -> None:
        """Show text decided against as prose, as written."""
        self.say()
        self.sink.emit(text)

    def error(self, message: str, raw: str) -> None:
        """Emit an error for the model, with an excerpt of the text it stands for."""
        self.say()
        self.items.append(CallParseError(message, excerpt(raw)))
        self.sink.mark_seam()

    def call(
        self,
        name: str,
        args: Any,
        syntax: str,
        raw: str,
        *,
        deprecated: bool = False,
    ) -> None:
        """Emit a call, or the error that stands in for it."""
        self.say()
        self.sink.mark_seam()
        try:
            self.items.append(self._make_call(name, args, syntax, raw, deprecated))
        except BadCall as exc:
            self.items.append(CallParseError(str(exc), excerpt(raw)))

    def _make_call(self, name: str, args: Any, syntax: str, raw: str, deprecated: bool) -> Item:
        if name not in self.tools:
            raise BadCall(unknown_tool(name, self.tools))
        if isinstance(args, str):
            args = load_json(args, name) if args.strip() else {}
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise BadCall(
                f"the arguments of '{name}' must be a JSON object, got {type(args).__name__}; "
                f"expected {EXPECTED}"
            )
        if not args:
            required = self.tools[name].get("required") or []
            if required:
                raise BadCall(
                    f"empty arguments; tool '{name}' needs: {', '.join(map(str, required))}; "
                    f"expected {EXPECTED}"
                )
        if deprecated and not self._allow_deprecated:
            raise BadCall(
                f"the short form <tool:{name}> is deprecated and not accepted here; "
                f'use <tool name="{name}" args>{{…}}</tool>'
            )
        return ParsedCall(name, args, syntax, deprecated, excerpt(raw))

    def schema_props(self, name: str | None) -> Mapping[str, Any]:
        """The argument schemas of tool `name` (empty for an unknown tool)."""
        return tool_properties(self.tools, name)

    def classify(self, full: re.Pattern[str], viable: re.Pattern[str], s: int) -> Any:
        """Match `full` at s within the look-ahead window; ... when undecided."""
        seg = self.buf[s : s + WINDOW]
        m = full.match(seg)
        if m or self.eof or len(seg) >= WINDOW or not viable.fullmatch(seg):
            return m
        return ...

    def scan_json(self, k: Construct) -> tuple[str, int, int] | None:
        """Advance a string-aware scan; an event (kind, start, end), or None for more text."""
        buf = self.buf
        n = len(buf)
        while True:
            pos = self.pos
            rx = k.in_re if k.in_str else k.out_re
            m = rx.search(buf, pos)
            if m is None:
                if self.eof:
                    if not self.take(n):
                        return ("cut", 0, 0)
                    return ("eof", n, n)
                lt = buf.rfind("<", max(pos, n - k.hold)) if k.hold else -1
                if not self.take(lt if lt >= 0 else n):
                    return ("cut", 0, 0)
                return None
            s = m.group()
            if k.in_str:
                if s == '"':
                    k.in_str = False
                elif s == "\\":
                    if m.end() >= n and not self.eof:
                        if not self.take(m.start()):
                            return ("cut", 0, 0)
                        return None
                    if not self.take(min(n, m.end() + 1)):
                        return ("cut", 0, 0)
                    continue
                elif k.fallback < 0:
                    k.fallback = self.acc_n + (m.end() - pos)
                if not self.take(m.end()):
                    return ("cut", 0, 0)
                continue
            if s == '"':
                k.in_str = True
            elif s in "{[":
                k.depth += 1
            elif s in "}]":
                k.depth -= 1
                if k.depth_mode and k.depth <= 0:
                    if not self.take(m.end()):
                        return ("cut", 0, 0)
                    return ("end", m.start(), m.end())
            elif s == k.close:
                return ("close", m.start(), m.end())
            else:
                return ("nested", m.start(), m.end())
            if not self.take(m.end()):
                return ("cut", 0, 0)


def fail(p: Cursor, message: str, skip_to: str = "") -> None:
    """Report an error; with `skip_to`, only once the construct's closing marker is passed."""
    k = p.k
    k.after = skip_to
    if not k.after:
        p.error(message, p.done())
        return
    k.mode = message
    p.state = st_skip


@waits_for(CLOSE_TAG)
def st_skip(p: Cursor) -> bool:
    """After an error: skip to the construct's closing marker, then report it."""
    k = p.k
    buf, pos, n = p.buf, p.pos, len(p.buf)
    i = buf.find(k.after, pos)
    if i < 0:
        if not p.eof:
            return not p.take(max(pos, n - len(k.after) + 1))
        p.take(n)
    elif not p.take(i + len(k.after)):
        return True
    wrapped = k.wrapped
    p.error(k.mode, p.construct_text())
    if wrapped and i >= 0:
        k.after = "</tool_call>"
        p.state = st_opt_close
    else:
        p.done()
    return True


def st_opt_close(p: Cursor) -> bool:
    """Consume an optional closing marker (and the blanks before it) after a call."""
    k = p.k
    buf, pos, n = p.buf, p.pos, len(p.buf)
    ws = skip(WS, buf, pos)
    if buf.startswith(k.after, ws):
        p.pos = ws + len(k.after)
    elif not p.eof and (ws >= n or k.after.startswith(buf[ws:])):
        return False
    p.acc, p.acc_n = [], 0
    p.state = p.idle
    return True
