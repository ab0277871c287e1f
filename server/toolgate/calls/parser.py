"""Streaming parser for tool calls a model writes as text, in every syntax models are seen to use.

The parser is a small state machine over a buffer that holds only the text not yet decided.
Prose is found with compiled regular expressions from a resume position, so the total work is
linear in the length of the answer; a construct that may be a call is held back until it is
decided, and every decision depends on the text alone, never on where a chunk ended.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolgate.calls.arguments import (
    EXPECTED,
    BadCall,
    is_json,
    load_json,
    looks_like_calls,
    name_and_arguments,
    python_literal,
    strip_fence,
    strip_one_newline,
    typed_value,
    unknown_tool,
)
from toolgate.calls.content import Content
from toolgate.calls.records import CallParseError, Item, ParsedCall, ParseResult, excerpt
from toolgate.calls.syntaxes import Failed, Prose, Syntax, registered
from toolgate.calls.syntaxes.continue_tool import is_continue_block, read_continue_block

MAX_CALL_CHARS = 4 * 1024 * 1024
_WINDOW = 256  # look-ahead used to decide whether something opens a call at all
_INLINE_WINDOW = 1000  # how far on one line an inline code span may reach

SYNTAXES: dict[str, str] = {
    "tag": '<tool name="NAME" args>{JSON}</tool> (also without args, single quotes, &quot;)',
    "short_tag": "<tool:NAME>{JSON} optionally closed by </tool> (deprecated)",
    "arrow_block": ">>> RUN COMMAND + command line, or >>> WRITE FILE: path + fenced block",
    "hermes": '<tool_call>{"name": …, "arguments": …}</tool_call> (Hermes, Qwen 2.5)',
    "qwen_xml": "<function=NAME><parameter=P>value</parameter></function> (Qwen3-Coder)",
    "mistral": '[TOOL_CALLS][{"name": …, "arguments": …}, …]',
    "mistral_v11": "[TOOL_CALLS]NAME[ARGS]{JSON}",
    "llama_json": '{"name": …, "parameters": …} alone on its line, or after <|python_tag|>',
    "pythonic": '[name(a=1, b="x"), other()] alone on its line',
    "xml_element": "<NAME><param>value</param>…</NAME> for a registered tool NAME",
    "fenced_json": '```json / ```tool / ```tool_call fence holding {"name": …, "arguments": …}',
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


# ---------------------------------------------------------------------------------------------
# Regular expressions. Triggers are what may open a call; everything else is prose.

# What at a line start may open a call, an arrow block or a fence in prose; what may close a
# plain fence. The chunk after one that ends at a line start is checked from there.
_HOLD_LIMIT = 200  # below every look-ahead window
# For each state, the characters on which an item (a call or an error) may complete in it.
_CLOSE_TAG = re.compile(r">")
_CLOSE_TAG_OR_JSON = re.compile(r"[>}\])]")
_CLOSE_JSON = re.compile(r"[}\])]")
_CLOSE_LINE = re.compile(r"\n")
# A fence's run of backticks or tildes either lies in one chunk or a chunk starts with it;
# `=` because a `<function=` opening without its `>` is an error once the look-ahead fills.
_CLOSE_LINE_OR_TAG = re.compile(r"[>}\]=\n]|^[`~]|``|~~")
_CLOSE_FENCE_RUN = {c: re.compile(f"\\n|^{c}|{c}{c}") for c in "`~"}
_CLOSERS = {
    "_st_fence": _CLOSE_LINE,
    "_st_tag": _CLOSE_TAG,
    "_st_nested": _CLOSE_TAG,
    "_st_qwen": _CLOSE_TAG,
    "_st_skip": _CLOSE_TAG,
    "_st_short_body": _CLOSE_JSON,
    "_st_json": _CLOSE_JSON,
    "_st_python": _CLOSE_JSON,
    "_st_arrow_line": _CLOSE_LINE,
    "_st_standalone": _CLOSE_LINE_OR_TAG,  # other text on the line makes it prose
}
_BLANKS_AND_OPENERS = frozenset(" \t>{[~`")
_PROSE_LINE = re.compile(r"[ \t]*+[>{\[~`]")
_PROSE_LINES = re.compile(r"\n[ \t]*+[>{\[~`]")
_FENCE_LINE = re.compile(r"[ \t]*+[~`]")
_FENCE_LINES = re.compile(r"\n[ \t]*+[~`]")
_XML_NAME = re.compile(r"[A-Za-z_][\w.-]*")
_LINE_START = re.compile(r"[ \t]*(>>>|\{|\[|`{3,}|~{3,})")
_LINE_START_PARTIAL = re.compile(r"[ \t]*(?:>{1,2}|`{1,2}|~{1,2})?")
_ARROW_NEXT_PARTIAL = re.compile(r"[ \t]*(?:`{1,2}|~{1,2}|\r)?")
_NL_TAIL = re.compile(r"[ \t]*(?:>{1,2})?")
_WORD = re.compile(r"[\w.-]*")
_WS = re.compile(r"\s*")
_BLANK_LINES = re.compile(r"(?:[ \t]*\r?\n)*")
_BACKTICKS = re.compile(r"`+")
_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})")

_TAG_NAME = re.compile(
    r"""\bname\s*=\s*(?:"([^"]*)"|'([^']*)'|&quot;(.*?)&quot;|&\#34;(.*?)&\#34;|([^\s"'>]+))"""
)
_ARGS_ATTR = re.compile(
    r"""<tool\s+name\s*=\s*(?:"([^"<>]*)"|'([^'<>]*)')\s+args\s*=\s*(?=['"]?\{)"""
)
_SHORT_OPEN = re.compile(r"<tool:\s*([A-Za-z_][\w.-]*)\s*>")
_FUNCTION_OPEN = re.compile(r"<function=\s*([^<>\s]+)\s*>")
_PARAMETER_OPEN = re.compile(r"<parameter=\s*([^<>\s]+)\s*>")
_XML_CHILD = re.compile(r"<([A-Za-z_][\w.-]*)>")
# `[ARGS]` is left out by Mistral's v11 tokenizer in Devstral, Mistral Small 3.2, Magistral
_MISTRAL_V11 = re.compile(r"([A-Za-z_][\w.-]*)(?:\[CALL_ID\][^\[\]\s]*)?(?:\[ARGS\])?\s*")
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
_PYTEST = re.compile(r"\s*(?:pytest|py\.test|python3?(?:\.\d+)?\s+-m\s+pytest)(?:\s|$)")

# A JSON call object's opening, and what may still grow into one (for early decisions).
_CALL_PREFIX = re.compile(r'\s*(\[\s*)?\{\s*"name"\s*:\s*"([^"\\\r\n]{1,200})"')
_CALL_VIABLE = re.compile(
    r'\s*(?:\[\s*)?(?:\{\s*(?:"(?:n(?:a(?:m(?:e(?:"\s*(?::\s*(?:"[^"\\\r\n]{0,200})?)?)?)?)?)?)?)?)?'
)
_PY_PREFIX = re.compile(r"\[\s*([A-Za-z_]\w*)\s*\(")
_PY_VIABLE = re.compile(r"\[\s*(?:[A-Za-z_]\w*\s*)?")

_OTHER_CALL_SYNTAX = re.compile(r"<tool[\s:>]|<tool_call>|<function=|\[TOOL_CALLS\]")
_CALL_FENCE_LANGS = {"json", "tool", "tool_call"}
_STRICT_FENCE_LANGS = {"tool", "tool_call"}
_PYTHON_TAG = "<|python_tag|>"


def _json_scanner(close: str | None, nested: str | None) -> tuple[re.Pattern[str], ...]:
    """Regexes for a string-aware scan: outside strings, and inside strings."""
    outside = [r'[{}\[\]"]']
    if close:
        outside.append(re.escape(close))
    if nested:
        outside.append(re.escape(nested) + (r"[\s:>]" if not nested.endswith(">") else ""))
    inside = r'["\\]' + ("|" + re.escape(close) if close else "")
    return re.compile("|".join(outside)), re.compile(inside)


_SCAN_PLAIN = _json_scanner(None, None)
_SCAN_TAG = _json_scanner("</tool>", "<tool")
_SCAN_HERMES = _json_scanner("</tool_call>", "<tool_call>")
_SCAN_SHORT = (_json_scanner(None, "<tool")[0], _SCAN_TAG[1])


class _Construct:
    """What the parser knows about the construct it is reading."""

    __slots__ = (
        "after",
        "attr_args",
        "body_ls",
        "body_start",
        "cand_re",
        "child",
        "close",
        "decided",
        "depth",
        "depth_mode",
        "fallback",
        "fchar",
        "flen",
        "hold",
        "impl",
        "in_re",
        "in_str",
        "kind",
        "lang",
        "mode",
        "name",
        "open_len",
        "opening",
        "out_re",
        "params",
        "quote",
        "strict",
        "syntax",
        "value_end",
        "value_start",
        "wrapped",
    )

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.syntax = kind
        self.name: str | None = None
        self.open_len = 0
        self.strict = True
        # string-aware scan
        self.out_re: re.Pattern[str] = _SCAN_PLAIN[0]
        self.in_re: re.Pattern[str] = _SCAN_PLAIN[1]
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
        self.impl: Syntax | None = None
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
        self.attr_args = False  # tag arguments written as `args={…}`


class StreamingCallParser:
    """Feed the model's text chunk by chunk; get each call the moment it closes."""

    __slots__ = (
        "_acc",
        "_at_ls",
        "_acc_n",
        "_allow_deprecated",
        "_buf",
        "_cap",
        "_content",
        "_delimited",
        "_delimited_re",
        "_eof",
        "_finished",
        "_items",
        "_k",
        "_lt_literals",
        "_lt_prefixes",
        "_lt_span",
        "_opens",
        "_pending",
        "_pos",
        "_prev",
        "_prose_end",
        "_prose_start",
        "_quiet",
        "_state",
        "_syntaxes",
        "_tools",
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
        self._syntaxes = {s.name: s for s in (registered() if syntaxes is None else syntaxes)}
        self._delimited = {lit: s for s in self._syntaxes.values() for lit in s.opens}
        openings = sorted(self._delimited, key=len, reverse=True)
        self._delimited_re = re.compile("|".join(re.escape(lit) for lit in openings) or "(?!)")
        self._tools = {str(k): (v if isinstance(v, Mapping) else {}) for k, v in tools.items()}
        self._allow_deprecated = allow_deprecated_syntax
        self._cap = max(4096, max_call_chars)
        self._buf = ""
        self._pos = 0
        self._prev = "\n"
        self._eof = False
        self._finished = False
        self._items: list[Item] = []
        self._acc: list[str] = []
        self._acc_n = 0
        self._k = _Construct("prose")
        self._state: Callable[[], bool] = self._st_prose
        self._content = Content()
        self._pending: list[str] = []  # prose `feed` stored without running the machinery
        # In prose or a plain fence with nothing held, what at a line start may matter.
        self._quiet: re.Pattern[str] | None = None
        self._at_ls = True  # the text so far ends at a line start
        self._wait: re.Pattern[str] | None = None  # see `feed`
        # Prose the machinery has passed but not yet handed to the content: one emit per stretch.
        self._prose_start = self._prose_end = 0
        names = sorted(self._tools, key=len, reverse=True)
        element = "|".join(re.escape(name) for name in names if _XML_NAME.fullmatch(name))
        # No named groups: they defeat the regex engine's first-character scan.
        self._trigger = re.compile(
            r"`[^`\n]{1,900}`(?!`)|`|<(?:tool[\s:>_]|function=|\|python_tag\|>"
            + (f"|(?:{element})>" if element else "")
            + "".join("|" + re.escape(lit[1:]) for lit in openings)
            + r")|\[TOOL_CALLS\]|\n(?=[ \t]*(?:>>>|[{\[~`]))"
        )
        self._lt_literals = ["<tool_", "<tool:", "<tool>", "<function=", _PYTHON_TAG, *openings]
        self._lt_literals += [f"<{name}>" for name in names if _XML_NAME.fullmatch(name)]
        self._lt_span = max(len(lit) for lit in self._lt_literals)
        # What opens a call in prose, or may still grow into an opening at the end of a chunk.
        self._opens = re.compile(
            "|".join(re.escape(lit) for lit in [*self._lt_literals, "<tool", "[TOOL_CALLS]"])
        )
        # Every opening cut by the end of the text, to hold back until the next chunk.
        self._lt_prefixes = {
            lit[:i] for lit in [*self._lt_literals, "[TOOL_CALLS]"] for i in range(1, len(lit) + 1)
        }

    # -- public -------------------------------------------------------------------------------

    def feed(self, chunk: str) -> list[Item]:
        """Add text; return the calls and errors that closed in it, in order."""
        # A chunk in which no call can open or close is only stored, and read with the next
        # one that may: this keeps small chunks cheap (benchmarks/README.md).
        if self._quiet is not None:
            if "\n" not in chunk and "<" not in chunk and "[" not in chunk and not self._at_ls:
                if chunk:  # mid-line, no opening: the common case, kept to a few `in` tests
                    self._pending.append(chunk)
                    return []
            elif self._inert(chunk):
                self._pending.append(chunk)
                tail = chunk.rstrip(" \t")
                self._at_ls = tail[-1] == "\n" if tail else self._at_ls
                return []
        wait = self._wait
        if (
            wait is not None
            and len(self._buf) + len(chunk) < _HOLD_LIMIT
            and not wait.search(chunk)
        ):
            # What is held can only complete on one of these characters; the look-ahead
            # windows are longer than the limit, so storing the chunk delays no decision.
            self._buf += chunk
            return []
        if self._finished:
            raise RuntimeError("feed() after finish()")
        if chunk:
            self._buf += chunk
            self._run()
        return self._drain()

    def finish(self) -> list[Item]:
        """End of output: decide everything held back; an unclosed call is an error."""
        if not self._finished:
            self._eof = True
            self._run()
            if self._state != self._st_prose or self._pos < len(self._buf):
                # Defensive: every state resolves at end of output; never lose text silently.
                rest = self._construct_text() + self._buf[self._pos :]
                self._buf, self._pos = "", 0
                self._error("the output ended inside an unfinished call", rest)
                self._state = self._st_prose
            self._content.close()
            self._finished = True
        return self._drain()

    def take_content(self) -> str:
        """Visible prose produced since the last call of this method."""
        if self._pending and not self._finished:
            self._run()  # what `feed` only stored completes nothing: this emits no item
        return self._content.take()

    @property
    def content(self) -> str:
        """All visible prose so far."""
        if self._pending and not self._finished:
            self._run()
        return self._content.text()

    def _inert(self, chunk: str) -> bool:
        """Whether, in prose or a plain fence with nothing held, `chunk` can change nothing.

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
        return chunk[cut:] not in self._lt_prefixes

    # -- machinery ----------------------------------------------------------------------------

    def _run(self) -> None:
        if self._pending:
            self._buf = "".join(self._pending) + self._buf  # nothing was held when it was stored
            self._pending = []
        while self._state():
            pass
        self._say()
        if self._pos:
            self._prev = self._buf[self._pos - 1]
            self._buf = self._buf[self._pos :]
            self._pos = 0
        st = self._state.__name__
        quiet = None
        if not self._buf and not self._eof:
            if st == "_st_prose":
                quiet = _PROSE_LINE
            elif st == "_st_fence" and self._k.mode == "plain":
                quiet = _FENCE_LINE
        self._quiet = quiet
        self._at_ls = self._k.body_ls if st == "_st_fence" else self._prev == "\n"
        self._wait = self._closers(st) if quiet is None and not self._eof else None

    def _closers(self, st: str) -> re.Pattern[str] | None:
        """The characters on which what is held (in state `st`) may complete an item, if any."""
        if self._acc_n + 2 * _HOLD_LIMIT > self._cap:
            return None
        if st == "_st_prose":
            return _CLOSE_LINE_OR_TAG  # held prose (inline code, a line start) ends at a line end
        if st == "_st_fence" and self._k.mode == "plain":
            return _CLOSE_FENCE_RUN[self._k.fchar]
        if st == "_st_tag" and self._k.depth_mode:
            return _CLOSE_TAG_OR_JSON  # `args="{…}`: what follows the object decides
        return _CLOSERS.get(st)

    def _drain(self) -> list[Item]:
        items, self._items = self._items, []
        return items

    def _prev_char(self) -> str:
        return self._buf[self._pos - 1] if self._pos else self._prev

    def _prose_to(self, end: int) -> None:
        if end > self._pos:
            if self._prose_end != self._pos:  # not where the last stretch of prose ended
                self._say()
                self._prose_start = self._pos
            self._prose_end = self._pos = end

    def _say(self) -> None:
        """Hand the stretch of prose passed so far to the content (before anything else is)."""
        if self._prose_end > self._prose_start:
            self._content.emit(self._buf[self._prose_start : self._prose_end])
        self._prose_start = self._prose_end = 0

    def _start(self, kind: str, state: Callable[[], bool]) -> _Construct:
        self._k = _Construct(kind)
        self._acc = []
        self._acc_n = 0
        self._state = state
        return self._k

    def _take(self, end: int) -> bool:
        """Move buffer text up to `end` into the construct; False when the size cap cut it."""
        if end > self._pos:
            self._acc.append(self._buf[self._pos : end])
            self._acc_n += end - self._pos
            self._pos = end
            if self._acc_n > self._cap:
                self._overflow()
                return False
        return True

    def _construct_text(self) -> str:
        text = "".join(self._acc)
        self._acc = [text] if text else []
        return text

    def _done(self) -> str:
        text = "".join(self._acc)
        self._acc = []
        self._acc_n = 0
        self._state = self._st_prose
        return text

    def _overflow(self) -> None:
        text = self._done()
        head, rest = text[: self._cap], text[self._cap :]
        self._error(
            f"call too large: more than {self._cap} characters without closing; "
            "write big files in several smaller edits",
            head,
        )
        self._pushback(rest, head[-1:])

    def _pushback(self, text: str, prev: str) -> None:
        """Put decided-against construct text back in front of the buffer, to read as prose."""
        self._say()
        self._buf = text + self._buf[self._pos :]
        self._pos = 0
        self._prev = prev or self._prev

    def _as_prose(self, text: str) -> None:
        self._say()
        self._content.emit(text)

    def _error(self, message: str, raw: str) -> None:
        self._say()
        self._items.append(CallParseError(message, excerpt(raw)))
        self._content.mark_seam()

    def _call(
        self,
        name: str,
        args: Any,
        syntax: str,
        raw: str,
        *,
        deprecated: bool = False,
    ) -> None:
        """Emit a call, or the error that stands in for it."""
        self._say()
        self._content.mark_seam()
        try:
            self._items.append(self._make_call(name, args, syntax, raw, deprecated))
        except BadCall as exc:
            self._items.append(CallParseError(str(exc), excerpt(raw)))

    def _make_call(self, name: str, args: Any, syntax: str, raw: str, deprecated: bool) -> Item:
        if name not in self._tools:
            raise BadCall(unknown_tool(name, self._tools))
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
            required = self._tools[name].get("required") or []
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

    def _schema_props(self, name: str | None) -> Mapping[str, Any]:
        props = self._tools.get(name or "", {}).get("properties")
        return props if isinstance(props, Mapping) else {}

    # -- prose --------------------------------------------------------------------------------

    def _st_prose(self) -> bool:
        buf, pos = self._buf, self._pos
        n = len(buf)
        if pos >= n:
            return False
        if (buf[pos - 1] if pos else self._prev) == "\n":
            decided = self._at_line_start()
            if decided is not None:
                return decided
        entry = pos
        search = self._trigger.search
        while True:
            m = search(buf, pos)
            if m is None:
                # Prose up to what may still open a call; nothing more without more text.
                self._prose_to(n if self._eof else self._prose_hold(pos))
                return False
            kind = buf[m.start()]
            if kind == "`" and m.end() - m.start() > 1:
                if m.end() < n or self._eof:  # a whole inline code span: an example, prose
                    pos = m.end()
                    continue
            if kind == "\n":
                pos = m.start() + 1
                self._prose_to(pos)
                decided = self._at_line_start()
                if decided is None:
                    continue
                return True
            i = m.start()
            if i > entry:
                self._prose_to(i)
                return True
            if kind == "<":
                return self._at_lt()
            if kind == "`":
                return self._at_backtick()
            return self._at_mistral()

    def _prose_hold(self, pos: int) -> int:
        buf = self._buf
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

    def _classify(self, full: re.Pattern[str], viable: re.Pattern[str], s: int) -> Any:
        """Match `full` at s within the look-ahead window; ... when undecided."""
        seg = self._buf[s : s + _WINDOW]
        m = full.match(seg)
        if m or self._eof or len(seg) >= _WINDOW or not viable.fullmatch(seg):
            return m
        return ...

    def _at_line_start(self) -> bool | None:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        m = _LINE_START.match(buf, pos)
        if m is None:
            if not self._eof and _LINE_START_PARTIAL.fullmatch(buf, pos):
                return False
            return None
        tok, s = m.group(1), m.start(1)
        if tok[0] in "`~":
            if m.end() == n and not self._eof:
                return False
            return self._at_fence(m)
        if tok == ">>>":
            return self._at_arrow()
        if tok == "{":
            got = self._classify(_CALL_PREFIX, _CALL_VIABLE, s)
            if got is ...:
                return False
            if got is None or got.group(1) or got.group(2) not in self._tools:
                return None
            self._prose_to(s)
            k = self._start("llama", self._st_json)
            k.syntax, k.after = "llama_json", "standalone"
            k.strict = False
            return True
        # "[": Mistral marker, a JSON list of calls, or a pythonic call list
        head = buf[s : s + 12]
        if head == "[TOOL_CALLS]":
            return None
        if "[TOOL_CALLS]".startswith(head) and not self._eof:
            return False
        got = self._classify(_CALL_PREFIX, _CALL_VIABLE, s)
        py = self._classify(_PY_PREFIX, _PY_VIABLE, s)
        if got is not None and got is not ... and got.group(1):
            if got.group(2) not in self._tools:
                return None
            self._prose_to(s)
            k = self._start("llama", self._st_json)
            k.syntax, k.after, k.strict = "llama_json", "standalone", False
            return True
        if py is not None and py is not ...:
            if py.group(1) not in self._tools:
                return None
            self._prose_to(s)
            self._start("pythonic", self._st_python)
            return True
        if got is ... or py is ...:
            return False
        return None

    # -- "<" openings ---------------------------------------------------------------------------

    def _at_lt(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        d = self._delimited_re.match(buf, pos)
        if d is not None:
            k = self._start("delimited", self._st_delimited)
            self._enter(k, self._delimited[d.group()], d.group(), taken=False)
            return self._take(d.end()) or True
        if not self._eof and n - pos <= self._lt_span and buf[pos:] in self._lt_prefixes:
            return False  # an opening cut by the end of the text so far
        if buf.startswith("<|", pos) or (pos + 1 == n and not self._eof):
            if buf.startswith(_PYTHON_TAG, pos):
                k = self._start("pytag", self._st_pytag)
                k.syntax, k.after = "llama_json", ""
                return self._take(pos + len(_PYTHON_TAG)) or True
            if _PYTHON_TAG.startswith(buf[pos:]) and not self._eof:
                return False
            if buf.startswith("<|", pos):
                self._prose_to(pos + 2)
                return True
        m = _WORD.match(buf, pos + 1)
        assert m is not None  # it matches the empty text
        end = m.end()
        if end >= n and not self._eof:
            if end - pos > _WINDOW:
                self._prose_to(pos + 1)
                return True
            return False
        word = m.group()
        nxt = buf[end] if end < n else ""
        if word == "tool" and nxt == ":":
            return self._open_short()
        if word == "tool" and (nxt == ">" or nxt.isspace()):
            return self._open_tag()
        if word == "tool_call" and nxt == ">":
            k = self._start("hermes", self._st_hermes_open)
            k.syntax = "hermes"
            return self._take(end + 1) or True
        if word == "function" and nxt == "=":
            return self._open_function(wrapped=False)
        if word in self._tools and nxt == ">":
            k = self._start("xml", self._st_xml)
            k.syntax, k.name, k.strict = "xml_element", word, False
            self._take(end + 1)
            k.open_len = self._acc_n
            return True
        self._prose_to(pos + 1)
        return True

    def _open_tag(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        attr_args = _ARGS_ATTR.match(buf, pos)
        if attr_args is not None:
            # `<tool name="X" args={…}</tool>`: the arguments written as the attribute's value.
            # Decided before looking for `>`: such a tag may have none, and one cut off by the
            # end of the output must still be reported as a cut-off call.
            name = next(g for g in attr_args.groups()[:2] if g is not None)
            k = self._start("tag", self._st_tag)
            k.name, k.attr_args = name, True
            k.out_re, k.in_re = _SCAN_TAG
            k.close, k.hold, k.depth_mode = "</tool>", 6, False
            end = attr_args.end()
            if buf[end] == '"':
                # `args="{…}"`: the quote is the attribute's, not a JSON string's. The object
                # is read to its end; the closing quote and `>` may then be missing.
                end += 1
                k.quote, k.depth_mode = '"', True
            self._take(end)
            k.open_len = self._acc_n
            return True
        gt = buf.find(">", pos, pos + _WINDOW)
        if gt < 0:
            if n - pos < _WINDOW and not self._eof:
                return False
            self._prose_to(pos + 1)
            return True
        if buf.find("<", pos + 1, gt) >= 0:
            self._prose_to(pos + 1)
            return True
        attrs = buf[pos + 5 : gt]
        nm = _TAG_NAME.search(attrs)
        name = next((g for g in nm.groups() if g is not None), "").strip() if nm else None
        if name is None:
            if attrs.strip() not in ("", "args", "/"):
                self._prose_to(pos + 1)
                return True
            # A tag without a name counts only when a {"name": …} object follows.
            ws = _skip(_WS, buf, gt + 1)
            if ws >= n and not self._eof:
                return False
            if ws >= n or buf[ws] != "{":
                self._prose_to(pos + 1)
                return True
        k = self._start("tag", self._st_tag)
        k.name = name
        k.out_re, k.in_re = _SCAN_TAG
        k.close, k.hold, k.depth_mode = "</tool>", 6, False
        self._take(gt + 1)
        k.open_len = self._acc_n
        return True

    def _open_short(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        gt = buf.find(">", pos, pos + _WINDOW)
        if gt < 0 and n - pos < _WINDOW and not self._eof:
            return False
        m = _SHORT_OPEN.match(buf, pos, gt + 1) if gt >= 0 else None
        if m is None:
            self._prose_to(pos + 1)
            return True
        k = self._start("short", self._st_short_open)
        k.syntax, k.name = "short_tag", m.group(1)
        self._take(m.end())
        k.open_len = self._acc_n
        return True

    def _open_function(self, *, wrapped: bool) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        gt = buf.find(">", pos, pos + _WINDOW)
        if gt < 0 and n - pos < _WINDOW and not self._eof:
            return False
        m = _FUNCTION_OPEN.match(buf, pos, gt + 1) if gt >= 0 else None
        if not wrapped:
            k = self._start("qwen", self._st_qwen)
        else:
            k = self._k
            self._state = self._st_qwen
        k.kind, k.syntax, k.wrapped = "qwen", "qwen_xml", wrapped
        if m is None:
            self._take(pos + len("<function="))
            self._fail(
                "malformed <function=NAME> opening; expected "
                "<function=NAME><parameter=P>value</parameter></function>"
            )
            return True
        k.name = m.group(1)
        self._take(m.end())
        return True

    # -- canonical tag and <tool_call> ----------------------------------------------------------

    def _scan_json(self, k: _Construct) -> tuple[str, int, int] | None:
        """Advance a string-aware scan; an event (kind, start, end), or None for more text."""
        buf = self._buf
        n = len(buf)
        while True:
            pos = self._pos
            rx = k.in_re if k.in_str else k.out_re
            m = rx.search(buf, pos)
            if m is None:
                if self._eof:
                    if not self._take(n):
                        return ("cut", 0, 0)
                    return ("eof", n, n)
                lt = buf.rfind("<", max(pos, n - k.hold)) if k.hold else -1
                if not self._take(lt if lt >= 0 else n):
                    return ("cut", 0, 0)
                return None
            s = m.group()
            if k.in_str:
                if s == '"':
                    k.in_str = False
                elif s == "\\":
                    if m.end() >= n and not self._eof:
                        if not self._take(m.start()):
                            return ("cut", 0, 0)
                        return None
                    if not self._take(min(n, m.end() + 1)):
                        return ("cut", 0, 0)
                    continue
                elif k.fallback < 0:
                    k.fallback = self._acc_n + (m.end() - pos)
                if not self._take(m.end()):
                    return ("cut", 0, 0)
                continue
            if s == '"':
                k.in_str = True
            elif s in "{[":
                k.depth += 1
            elif s in "}]":
                k.depth -= 1
                if k.depth_mode and k.depth <= 0:
                    if not self._take(m.end()):
                        return ("cut", 0, 0)
                    return ("end", m.start(), m.end())
            elif s == k.close:
                return ("close", m.start(), m.end())
            else:
                return ("nested", m.start(), m.end())
            if not self._take(m.end()):
                return ("cut", 0, 0)

    def _st_hermes_open(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        ws = _skip(_WS, buf, pos)
        if buf.startswith("<function=", ws):
            if not self._take(ws):
                return True
            return self._open_function(wrapped=True)
        if not self._eof and (ws >= n or "<function=".startswith(buf[ws : ws + 10])):
            return False
        k = self._k
        glm = self._syntaxes.get("glm")
        if ws < n and (buf[ws].isalpha() or buf[ws] == "_") and glm is not None:
            # `<tool_call>NAME<arg_key>…`: GLM's form, read by its syntax
            self._enter(k, glm, "<tool_call>", taken=True)
            self._state = self._st_delimited
            return True
        k.out_re, k.in_re = _SCAN_HERMES
        k.close, k.hold, k.depth_mode = "</tool_call>", 11, False
        k.open_len = self._acc_n
        self._state = self._st_tag
        return True

    def _st_tag(self) -> bool:
        k = self._k
        ev = self._scan_json(k)
        if ev is None:
            return False
        kind, i, j = ev
        if kind == "cut":
            return True
        if kind == "end":  # the JSON object of `args="{…}` is complete
            k.value_end = self._acc_n
            self._state = self._st_attr_after
            return True
        if kind == "close":
            if not self._take(i):
                return True
            body_end = self._acc_n
            if not self._take(j):
                return True
            text = self._done()
            self._resolve_tag(k, text[k.open_len : body_end], text)
            return True
        if kind == "nested":
            if not self._take(j):
                return True
            k.depth = 2
            self._state = self._st_nested
            return True
        text = self._done()
        if k.fallback >= 0:
            self._error(
                f"broken JSON in {_what(k)}: a string is never closed; "
                f"expected {EXPECTED} with valid JSON",
                text[: k.fallback],
            )
            self._pushback(text[k.fallback :], text[k.fallback - 1])
            return True
        self._error(
            f"unclosed {_what(k)}: the output ended before {k.close}; nothing was run; "
            f"expected {EXPECTED}",
            text,
        )
        return True

    def _st_attr_after(self) -> bool:
        """After `args="{…}`: the attribute's closing quote and `>` are optional; `</tool>` is not.

        Small models drop the end of the attribute (`args="{}</tool>`); a person still reads
        the call. Anything else after the object is an error, and nothing is run.
        """
        buf, n, k = self._buf, len(self._buf), self._k
        end = self._pos
        while True:  # what was seen is kept in `k.after`, so no text is read twice
            end = _skip(_WS, buf, end)
            if end < n and buf[end] == '"' and not k.after:
                k.after = '"'
            elif end < n and buf[end] == ">" and ">" not in k.after:
                k.after += ">"
            else:
                break
            end += 1
        if not self._take(end):
            return True
        if buf.startswith("</tool>", end):
            if not self._take(end + 7):
                return True
            text = self._done()
            try:
                args = load_json(text[k.open_len : k.value_end], k.name or "")
            except BadCall as exc:
                self._error(str(exc), text)
                return True
            self._call(k.name or "", args, k.syntax, text)
            return True
        if not self._eof and (end >= n or "</tool>".startswith(buf[end:])):
            return False
        what = "the output ended" if end >= n else "other text follows"
        self._error(
            f"unclosed {_what(k)}: {what} after its arguments instead of </tool>; nothing was "
            f"run; expected {EXPECTED}",
            self._done(),
        )
        return True

    def _st_nested(self) -> bool:
        """Skip to the close matching a call opened inside another; the whole is one error."""
        k = self._k
        rx = _NESTED_HERMES if k.kind == "hermes" else _NESTED_TAG
        buf, n = self._buf, len(self._buf)
        while True:
            pos = self._pos
            m = rx.search(buf, pos)
            if m is None:
                if not self._eof:
                    return not self._take(max(pos, n - 11))
                if not self._take(n):
                    return True
                break
            k.depth += -1 if m.group().startswith("</") else 1
            if not self._take(m.end()):
                return True
            if k.depth <= 0:
                break
        self._error(
            f"nested tag: a call opened inside {_what(k)} before it was closed; nothing was run; "
            f"write one call per tag: {EXPECTED}",
            self._done(),
        )
        return True

    def _resolve_tag(self, k: _Construct, body: str, raw: str) -> None:
        text = strip_fence(body.strip())
        if k.attr_args:
            text = text.removesuffix(">").strip()
            if k.quote:
                text = text.removesuffix(k.quote).strip()
                if '\\"' in text and not is_json(text):
                    # Quotes escaped for the attribute: `args="{\"path\": \"a.py\"}"`.
                    text = text.replace('\\"', '"')
            elif len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
                text = text[1:-1]
        try:
            if k.kind == "hermes" or k.name is None:
                value = _hermes_value(text) if k.kind == "hermes" else None
                if value is None:
                    value = load_json(text, k.name or "tool_call")
                if k.kind == "hermes" and isinstance(value, list) and value:
                    # several calls in one tag, as xLAM and some Qwen fine-tunes write them
                    for item in value:
                        try:
                            name, args = name_and_arguments(item, _what(k))
                        except BadCall as exc:
                            self._error(str(exc), raw)
                            continue
                        self._call(name, args, k.syntax, raw)
                    return
                name, args = name_and_arguments(value, _what(k))
            else:
                name = k.name
                args = load_json(text, name) if text else {}
                if (
                    isinstance(args, dict)
                    and args.get("name") == name
                    and set(args) in ({"name", "arguments"}, {"name", "parameters"})
                    and "name" not in self._schema_props(name)
                ):
                    args = args.get("arguments", args.get("parameters"))
        except BadCall as exc:
            self._error(str(exc), raw)
            return
        self._call(name, args, k.syntax, raw)

    # -- short tag ------------------------------------------------------------------------------

    def _st_short_open(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        ws = _skip(_WS, buf, pos)
        k = self._k
        if ws < n and buf[ws] == "{":
            if not self._take(ws):
                return True
            k.out_re, k.in_re = _SCAN_SHORT
            k.hold, k.close = 6, None
            self._state = self._st_short_body
            return True
        if buf.startswith("</tool>", ws):
            self._take(ws + 7)
            text = self._done()
            self._call(k.name or "", {}, "short_tag", text, deprecated=True)
            return True
        if not self._eof and (ws >= n or "</tool>".startswith(buf[ws:])):
            return False
        text = self._done()
        self._call(k.name or "", {}, "short_tag", text, deprecated=True)
        return True

    def _st_short_body(self) -> bool:
        k = self._k
        ev = self._scan_json(k)
        if ev is None:
            return False
        kind, i, _ = ev
        if kind == "cut":
            return True
        if kind == "end":
            k.value_end = self._acc_n
            self._state = self._st_short_after
            return True
        if kind == "nested":
            if not self._take(i):
                return True
            self._error(
                f"nested tag: a call opened inside <tool:{k.name}> before its JSON was "
                f"complete; nothing was run; expected {EXPECTED}",
                self._done(),
            )
            return True
        text = self._done()
        if k.fallback >= 0:
            self._error(
                f"broken JSON in <tool:{k.name}>: a string is never closed; expected {EXPECTED}",
                text[: k.fallback],
            )
            self._pushback(text[k.fallback :], text[k.fallback - 1])
            return True
        self._error(
            f"unclosed <tool:{k.name}>: the output ended inside its JSON; nothing was run; "
            f"expected {EXPECTED}",
            text,
        )
        return True

    def _st_short_after(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        ws = _skip(_WS, buf, pos)
        if buf.startswith("</tool>", ws):
            if not self._take(ws + 7):
                return True
        elif not self._eof and (ws >= n or "</tool>".startswith(buf[ws:])):
            return False
        k = self._k
        text = self._done()
        try:
            args = load_json(text[k.open_len : k.value_end].strip(), k.name or "")
        except BadCall as exc:
            self._error(str(exc), text)
            return True
        self._call(k.name or "", args, "short_tag", text, deprecated=True)
        return True

    # -- generic JSON value (Mistral, Llama, <|python_tag|>) ------------------------------------

    def _at_mistral(self) -> bool:
        k = self._start("mistral", self._st_mistral_open)
        k.syntax = "mistral"
        self._take(self._pos + len("[TOOL_CALLS]"))
        return True

    def _st_mistral_open(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        ws = _skip(_WS, buf, pos)
        if ws >= n and not self._eof:
            return False
        if ws < n and buf[ws] in "[{":
            if not self._take(ws):
                return True
            self._k.after = "list"
            self._state = self._st_json
            return True
        # [TOOL_CALLS]NAME[ARGS]{…}: decide once a "{" or a line end is in view
        seg = buf[ws : ws + _WINDOW]
        stop = min((x for x in (seg.find("{"), seg.find("\n")) if x >= 0), default=-1)
        if stop < 0 and len(seg) < _WINDOW and not self._eof:
            return False
        m = _MISTRAL_V11.fullmatch(seg, 0, stop) if stop >= 0 else None
        if m is None or seg[stop] != "{":
            if not self._take(ws):
                return True
            self._fail(
                "after [TOOL_CALLS] expected a JSON list "
                '[{"name": …, "arguments": {…}}] or NAME[ARGS]{…}'
            )
            return True
        k = self._k
        k.name, k.syntax, k.after = m.group(1), "mistral_v11", "args"
        self._take(ws + stop)
        k.value_start = self._acc_n
        self._state = self._st_json
        return True

    def _st_pytag(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        ws = _skip(_WS, buf, pos)
        if ws >= n and not self._eof:
            return False
        if ws < n and buf[ws] == "{":
            if not self._take(ws):
                return True
            self._k.value_start = self._acc_n
            self._state = self._st_json
            return True
        self._as_prose(self._done())
        return True

    def _st_json(self) -> bool:
        k = self._k
        if k.depth == 0 and not k.value_start:
            k.value_start = self._acc_n
        ev = self._scan_json(k)
        if ev is None:
            return False
        kind = ev[0]
        if kind == "cut":
            return True
        if kind == "end":
            k.value_end = self._acc_n
            if k.after == "standalone":
                self._state = self._st_standalone
            else:
                self._resolve_json(self._done())
            return True
        text = self._done()
        self._error(
            f"unclosed {_what(k)}: the output ended inside its JSON; nothing was run; "
            f"expected {_expected(k)}",
            text,
        )
        return True

    def _st_standalone(self) -> bool:
        """A call in an ambiguous syntax counts only when nothing else shares its line."""
        buf, pos, n = self._buf, self._pos, len(self._buf)
        i = pos
        while i < n and buf[i] in " \t\r":
            i += 1
        if i >= n and not self._eof:
            return False
        k = self._k
        if i < n and buf[i] != "\n":
            self._as_prose(self._done())
            return True
        end = i - 1 if i > pos and buf[i - 1] == "\r" and i < n else i
        if not self._take(end):
            return True
        text = self._done()
        if k.kind == "pythonic":
            self._resolve_python(text, k)
        else:
            self._resolve_json(text)
        return True

    def _resolve_json(self, text: str) -> None:
        k = self._k
        value = text[k.value_start : k.value_end]
        try:
            obj = load_json(value, k.name or _what(k))
        except BadCall as exc:
            self._error(str(exc), text)
            return
        if k.syntax == "mistral_v11":
            self._call(k.name or "", obj, "mistral_v11", text)
            return
        items = obj if isinstance(obj, list) else [obj]
        if not items:
            self._error(f"empty call list in {_what(k)}; expected {_expected(k)}", text)
            return
        if not k.strict and not looks_like_calls(items, self._tools):
            self._as_prose(text)
            return
        for item in items:
            try:
                name, args = name_and_arguments(item, _what(k))
            except BadCall as exc:
                self._error(str(exc), text)
                continue
            self._call(name, args, k.syntax, text)

    # -- pythonic -------------------------------------------------------------------------------

    def _st_python(self) -> bool:
        k = self._k
        buf, n = self._buf, len(self._buf)
        while True:
            pos = self._pos
            if k.quote:
                q = k.quote
                rx = _PY_IN[q]
                m = rx.search(buf, pos)
                if m is None:
                    if self._eof:
                        if not self._take(n):
                            return True
                        break
                    return not self._take(max(pos, n - (len(q) - 1)))
                s = m.group()
                if s == "\\":
                    if m.end() >= n and not self._eof:
                        return not self._take(m.start())
                    if not self._take(min(n, m.end() + 1)):
                        return True
                    continue
                if s == "\n":  # a newline ends a one-line string: not Python after all
                    if self._take(m.start()):
                        self._as_prose(self._done())
                    return True
                k.quote = ""
                if not self._take(m.end()):
                    return True
                continue
            m = _PY_OUT.search(buf, pos)
            if m is None:
                if self._eof:
                    if not self._take(n):
                        return True
                    break
                return not self._take(n)
            s = m.group()
            if s in "'\"":
                if m.start() + 3 > n and not self._eof:
                    return not self._take(m.start())
                triple = buf.startswith(s * 3, m.start())
                k.quote = s * 3 if triple else s
                if not self._take(m.start() + len(k.quote)):
                    return True
                continue
            k.depth += 1 if s in "([{" else -1
            if not self._take(m.end()):
                return True
            if k.depth <= 0:
                self._state = self._st_standalone
                return True
        text = self._done()
        self._error(
            "unclosed pythonic call list: the output ended before its closing ']'; nothing was "
            f"run; expected {EXPECTED}",
            text,
        )
        return True

    def _resolve_python(self, text: str, k: _Construct) -> None:
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            self._error(
                f"could not parse the pythonic call list ({exc.__class__.__name__}); "
                f"expected {EXPECTED}",
                text,
            )
            return
        body = tree.body
        if not isinstance(body, ast.List) or not all(
            isinstance(e, ast.Call) and isinstance(e.func, ast.Name) for e in body.elts
        ):
            self._as_prose(text)
            return
        for call in body.elts:
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            name = call.func.id
            try:
                if call.args:
                    raise BadCall(
                        f"pythonic call to '{name}' has positional arguments; "
                        "write name=value for each argument"
                    )
                args: dict[str, Any] = {}
                for kw in call.keywords:
                    if kw.arg is None:
                        raise BadCall(f"pythonic call to '{name}' uses **; write name=value")
                    args[kw.arg] = python_literal(kw.value, name, kw.arg)
            except BadCall as exc:
                self._error(str(exc), text)
                continue
            self._call(name, args, "pythonic", text)

    # -- XML forms ------------------------------------------------------------------------------

    def _st_xml(self) -> bool:
        """`<tool_name><param>value</param>…</tool_name>`: children typed by the schema."""
        k = self._k
        buf, n = self._buf, len(self._buf)
        while True:
            pos = self._pos
            if k.child is not None:
                close = f"</{k.child}>"
                i = buf.find(close, pos)
                if i < 0:
                    if self._eof:
                        self._take(n)
                        return self._fail_xml("the output ended inside <" + k.child + ">")
                    lt = buf.rfind("<", max(pos, n - len(close) + 1))
                    return not self._take(lt if lt >= 0 else n)
                start = k.value_start
                if not self._take(i):
                    return True
                k.params.append((k.child, start, self._acc_n))
                k.child = None
                if not self._take(i + len(close)):
                    return True
                continue
            ws = _skip(_WS, buf, pos)
            if not self._take(ws):
                return True
            close = f"</{k.name}>"
            if buf.startswith(close, ws):
                if not self._take(ws + len(close)):
                    return True
                text = self._done()
                args = {
                    p: typed_value(strip_one_newline(text[a:b]), self._schema_props(k.name).get(p))
                    for p, a, b in k.params
                }
                self._call(k.name or "", args, "xml_element", text)
                return True
            m = _XML_CHILD.match(buf, ws)
            if m and m.group(1) != k.name:
                if not self._take(m.end()):
                    return True
                k.child = m.group(1)
                k.value_start = self._acc_n
                continue
            rest = buf[ws : ws + _WINDOW]
            if (
                not self._eof
                and len(rest) < _WINDOW
                and (close.startswith(rest) or re.fullmatch(r"<[A-Za-z_]?[\w.-]*", rest))
            ):
                return not self._take(ws)
            if k.params:
                return self._fail_xml(f"unexpected text inside <{k.name}>")
            # Not an element with parameter children: it was prose after all.
            text = self._done()
            self._as_prose(text[: k.open_len])
            self._pushback(text[k.open_len :], ">")
            return True

    def _fail_xml(self, what: str) -> bool:
        k = self._k
        self._error(
            f"{what}; nothing was run; expected <{k.name}><param>value</param>…</{k.name}> "
            f"or {EXPECTED}",
            self._done(),
        )
        return True

    def _st_qwen(self) -> bool:
        """`<function=NAME><parameter=P>value</parameter>…</function>`."""
        k = self._k
        buf, n = self._buf, len(self._buf)
        while True:
            pos = self._pos
            if k.child is not None:
                m = _QWEN_VALUE_END.search(buf, pos)
                if m is None:
                    if self._eof:
                        self._take(n)
                        return self._fail_qwen("the output ended inside <parameter=" + k.child)
                    lt = buf.rfind("<", max(pos, n - 11))
                    return not self._take(lt if lt >= 0 else n)
                start = k.value_start
                if not self._take(m.start()):
                    return True
                k.params.append((k.child, start, self._acc_n))
                k.child = None
                if m.group() == "</parameter>" and not self._take(m.end()):
                    return True
                continue
            ws = _skip(_WS, buf, pos)
            if not self._take(ws):
                return True
            if buf.startswith("</function>", ws):
                if not self._take(ws + 11):
                    return True
                text = self._construct_text()
                props = self._schema_props(k.name)
                args = {
                    p: typed_value(strip_one_newline(text[a:b]), props.get(p))
                    for p, a, b in k.params
                }
                name = k.name or ""
                if k.wrapped:
                    self._state = self._st_opt_close
                    k.after = "</tool_call>"
                    self._call(name, args, "qwen_xml", text)
                else:
                    self._done()
                    self._call(name, args, "qwen_xml", text)
                return True
            m = _PARAMETER_OPEN.match(buf, ws)
            if m:
                if not self._take(m.end()):
                    return True
                k.child = m.group(1)
                k.value_start = self._acc_n
                continue
            rest = buf[ws : ws + _WINDOW]
            if (
                not self._eof
                and len(rest) < _WINDOW
                and (
                    "</function>".startswith(rest)
                    or (rest.startswith("<parameter=") and ">" not in rest)
                    or "<parameter=".startswith(rest)
                )
            ):
                return not self._take(ws)
            if self._eof and ws >= n:
                return self._fail_qwen("the output ended before </function>")
            functionary = self._syntaxes.get("functionary")
            if buf.startswith("{", ws) and not k.params and not k.wrapped and functionary:
                # `<function=NAME>{JSON}</function>`: Functionary's form, read by its syntax
                self._enter(k, functionary, f"<function={k.name}>", taken=True)
                self._state = self._st_delimited
                return True
            self._fail(
                f"unexpected text inside <function={k.name}>; expected "
                "<parameter=NAME>value</parameter> or </function>"
            )
            return True

    def _fail_qwen(self, what: str) -> bool:
        k = self._k
        self._error(
            f"{what}; nothing was run; expected <function={k.name}>"
            "<parameter=P>value</parameter></function>",
            self._done(),
        )
        return True

    def _fail(self, message: str) -> None:
        """Report an error and skip to the construct's closing marker."""
        k = self._k
        k.after = {"qwen": "</function>", "mistral": ""}.get(k.kind, "")
        if not k.after:
            self._error(message, self._done())
            return
        k.mode = message
        self._state = self._st_skip

    def _st_skip(self) -> bool:
        k = self._k
        buf, pos, n = self._buf, self._pos, len(self._buf)
        i = buf.find(k.after, pos)
        if i < 0:
            if not self._eof:
                return not self._take(max(pos, n - len(k.after) + 1))
            self._take(n)
        elif not self._take(i + len(k.after)):
            return True
        wrapped = k.wrapped
        self._error(k.mode, self._construct_text())
        if wrapped and i >= 0:
            k.after = "</tool_call>"
            self._state = self._st_opt_close
        else:
            self._done()
        return True

    def _st_opt_close(self) -> bool:
        """Consume an optional closing marker (and the blanks before it) after a call."""
        k = self._k
        buf, pos, n = self._buf, self._pos, len(self._buf)
        ws = _skip(_WS, buf, pos)
        if buf.startswith(k.after, ws):
            self._pos = ws + len(k.after)
        elif not self._eof and (ws >= n or k.after.startswith(buf[ws:])):
            return False
        self._acc, self._acc_n = [], 0
        self._state = self._st_prose
        return True

    # -- delimited syntaxes (syntaxes/) ---------------------------------------------------------

    def _enter(self, k: _Construct, syntax: Syntax, opening: str, *, taken: bool) -> None:
        """Read the construct `k` with `syntax` from here on (`taken`: its opening is read)."""
        k.kind, k.syntax, k.impl, k.opening = "delimited", syntax.name, syntax, opening
        if syntax.closes:
            ends = sorted(syntax.closes, key=len, reverse=True)
            k.cand_re = re.compile("|".join(re.escape(c) for c in ends))
            k.hold = max(len(c) for c in ends) - 1
        else:
            k.cand_re = None
            self._state = self._st_delimited_value
        k.open_len = self._acc_n + (0 if taken else len(opening))

    def _st_delimited(self) -> bool:
        """Hold the construct until one of its closing literals arrives."""
        k = self._k
        if k.cand_re is None:
            self._state = self._st_delimited_value
            return True
        buf, pos, n = self._buf, self._pos, len(self._buf)
        m = k.cand_re.search(buf, pos)
        if m is None:
            if not self._eof:
                # the end may hold the start of a closing literal: keep it in the buffer
                return not self._take(max(pos, n - k.hold))
            if not self._take(n):
                return True
            text = self._done()
            assert k.impl is not None
            if k.impl.ends_at_output_end:
                self._resolve_delimited(k, text[k.open_len :], text)
            else:
                self._error(
                    f"unclosed {k.opening}: the output ended before {k.impl.closes[0]}; "
                    f"nothing was run; expected {k.impl.example}",
                    text,
                )
            return True
        if not self._take(m.end()):
            return True
        text = self._done()
        self._resolve_delimited(k, text[k.open_len : len(text) - len(m.group())], text)
        return True

    def _st_delimited_value(self) -> bool:
        """Hold the construct until the JSON value after its opening ends."""
        k = self._k
        assert k.impl is not None
        buf, n = self._buf, len(self._buf)
        if not k.decided:
            ws = _skip(_WS, buf, self._pos)
            if ws >= n and not self._eof:
                return not self._take(ws)
            if ws >= n or buf[ws] not in "[{":
                self._take(ws)
                self._error(
                    f"{k.impl.name}: expected a JSON list or object after {k.opening}; "
                    f"nothing was run; expected {k.impl.example}",
                    self._done(),
                )
                return True
            k.decided = True
        i = self._pos
        while True:
            if k.in_str:
                m = _IN_STRING.search(buf, i)
                if m is None:
                    break
                if m.group() == "\\":
                    if m.end() >= n and not self._eof:
                        return not self._take(m.start())  # an escape cut in two
                    i = m.end() + 1
                    continue
                k.in_str = False
                i = m.end()
                continue
            m = _OUT_STRING.search(buf, i)
            if m is None:
                break
            c, i = m.group(), m.end()
            if c == '"':
                k.in_str = True
            elif c in "[{":
                k.depth += 1
            else:
                k.depth -= 1
                if k.depth <= 0:
                    if not self._take(i):
                        return True
                    text = self._construct_text()
                    if k.impl.trailer:
                        k.after = k.impl.trailer
                        self._state = self._st_opt_close
                    else:
                        self._done()
                    self._resolve_delimited(k, text[k.open_len :], text)
                    return True
        if not self._take(n):
            return True
        if self._eof:
            self._error(
                f"unclosed {k.opening}: the output ended inside its JSON; nothing was run",
                self._done(),
            )
            return True
        return False

    def _resolve_delimited(self, k: _Construct, body: str, text: str) -> None:
        """Hand the construct's body to its syntax; emit its calls, errors or prose."""
        syntax = k.impl
        assert syntax is not None
        try:
            reading = syntax.read(k.opening, body, self._tools)
        except Exception as exc:  # a syntax from outside must never crash the parser
            self._error(f"{syntax.name}: could not read the call ({exc!r})", text)
            return
        if isinstance(reading, Prose):
            self._as_prose(reading.text)
            return
        for item in reading:
            if isinstance(item, Failed):
                self._error(item.message, text)
                continue
            args = item.arguments
            if isinstance(args, str) and args.strip():
                try:
                    args = load_json(args, item.name, syntax.example)
                except BadCall as exc:
                    self._error(f"{syntax.name}: {exc}", text)
                    continue
            self._call(item.name, args, syntax.name, text)

    # -- fences, inline code and arrow blocks ---------------------------------------------------

    def _at_backtick(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        m = _BACKTICKS.match(buf, pos)
        assert m is not None  # called at a backtick
        run = m.end() - pos
        if m.end() >= n and not self._eof:
            return False
        limit = m.end() + _INLINE_WINDOW
        nl = buf.find("\n", m.end(), limit)
        if nl < 0:
            if n < limit and not self._eof:
                return False
            nl = min(n, limit)
        for c in _BACKTICKS.finditer(buf, m.end(), nl):
            if c.end() - c.start() == run:
                self._prose_to(c.end())
                return True
        self._prose_to(m.end())
        return True

    def _at_fence(self, m: re.Match[str], mode: str = "plain") -> bool | None:
        """A fence opening at line start: plain fences are prose; some fences may be calls."""
        buf, n = self._buf, len(self._buf)
        run = m.group(1)
        nl = buf.find("\n", m.end(), m.end() + _WINDOW)
        if nl < 0:
            if not self._eof and n - m.end() < _WINDOW:
                return False
            nl = -1
        info = buf[m.end() : nl if nl >= 0 else min(n, m.end() + _WINDOW)]
        if mode == "plain" and _inline_code(run, info):
            return None
        lang = _fence_lang(info)
        if mode == "plain" and lang in _CALL_FENCE_LANGS:
            mode = "call"
        if mode == "plain":
            k = _Construct("fence")
        elif mode in ("write", "run"):
            k = self._k
        else:
            # constructs start after the indentation, however the indentation arrived
            self._prose_to(m.start(1))
            k = self._start("fence", self._st_fence)
        _set_fence(k, run, lang, mode)
        end = nl + 1 if nl >= 0 else m.end()
        k.body_ls = nl >= 0
        if mode == "plain":
            self._k = k
            self._state = self._st_fence
            self._prose_to(end)
        else:
            self._state = self._st_fence
            if not self._take(end):
                return True
        k.body_start = self._acc_n
        return True

    def _fence_close_at(self, k: _Construct) -> int | None | bool:
        """At a body line start: end of a closing fence line, None if not one, False for more."""
        buf, pos = self._buf, self._pos
        nl = buf.find("\n", pos)
        line = buf[pos:] if nl < 0 else buf[pos:nl]
        if nl < 0 and not self._eof:
            if len(line) < _WINDOW and _FENCE_CLOSE_VIABLE[k.fchar].fullmatch(line):
                return False
            return None
        if not _closes_fence(k.fchar, k.flen, line):
            return None
        return pos + len(line) - (1 if line.endswith("\r") else 0)

    def _fence_take(self, k: _Construct, end: int) -> bool:
        if k.mode == "plain":
            self._prose_to(end)
            return True
        return self._take(end)

    def _st_fence(self) -> bool:
        k = self._k
        buf, n = self._buf, len(self._buf)
        while True:
            pos = self._pos
            if k.mode == "call" and not k.decided and not self._decide_call_fence(k):
                return True
            if pos >= n and not self._eof:
                return False
            if k.body_ls and pos < n:
                end = self._fence_close_at(k)
                if end is False:
                    return False
                if end is not None and end is not True:
                    return self._close_fence(k, int(end))
            elif k.body_ls and self._eof:
                return self._close_fence(k, -1)
            m = k.cand_re.search(buf, pos) if k.cand_re else None
            if m is not None:
                if not self._fence_take(k, m.start() + 1):
                    return True
                k.body_ls = True
                continue
            if self._eof:
                if not self._fence_take(k, n):
                    return True
                return self._close_fence(k, -1)
            j = buf.rfind("\n", pos)
            hold = n
            if j >= 0 and _FENCE_CLOSE_VIABLE[k.fchar].fullmatch(buf, j + 1):
                hold = j + 1
            if hold <= pos:
                return False
            if not self._fence_take(k, hold):
                return True
            k.body_ls = buf[hold - 1] == "\n"
            return False

    def _decide_call_fence(self, k: _Construct) -> bool:
        """A ```json fence is held back only while its body may still be a call."""
        if k.lang in _STRICT_FENCE_LANGS:
            k.decided = True
            return True
        body = self._construct_text()[k.body_start :] + self._buf[self._pos : self._pos + _WINDOW]
        seg = body[:_WINDOW]
        m = _CALL_PREFIX.match(seg)
        if m and m.group(2) in self._tools:
            k.decided = True
            return True
        if m is None and not self._eof and len(seg) < _WINDOW and _CALL_VIABLE.fullmatch(seg):
            return True
        # Not a call: the fence so far is prose, and the rest is read as a plain fence.
        self._as_prose(self._done())
        k.mode = "plain"
        k.decided = True
        self._k = k
        self._state = self._st_fence
        return False

    def _close_fence(self, k: _Construct, end: int) -> bool:
        """The fence closed at `end` (-1: the output ended inside it)."""
        if k.mode == "plain":
            if end >= 0:
                self._prose_to(end)
            self._k = _Construct("prose")
            self._state = self._st_prose
            return True
        body_end = self._acc_n
        if end >= 0 and not self._take(end):
            return True
        text = self._done()
        body = text[k.body_start : body_end]
        if end < 0:
            if k.mode == "call" and not (k.lang in _STRICT_FENCE_LANGS and body.strip()):
                if not _CALL_PREFIX.match(body[:_WINDOW]):
                    self._as_prose(text)
                    return True
            self._error(
                f"unclosed code fence ({_what(k)}): the output ended before its closing "
                f"{k.fchar * k.flen}; nothing was run",
                text,
            )
            return True
        if k.mode == "write":
            self._call("write_file", {"path": k.name, "content": body}, "arrow_block", text)
            return True
        if k.mode == "run":
            self._arrow_command(body.strip(), text)
            return True
        self._resolve_call_fence(k, body, text)
        return True

    def _resolve_call_fence(self, k: _Construct, body: str, text: str) -> None:
        strict = k.lang in _STRICT_FENCE_LANGS
        if k.lang == "tool" and is_continue_block(body):
            found = read_continue_block(body, self._tools)
            if isinstance(found, Failed):
                self._error(found.message, text)
            else:
                self._call(found.name, found.arguments, "continue_tool", text)
            return
        if _OTHER_CALL_SYNTAX.search(body):  # a fence showing another syntax is an example
            self._as_prose(text)
            return
        try:
            obj = load_json(body.strip(), f"```{k.lang} block")
        except BadCall as exc:
            if strict:
                self._error(str(exc), text)
            else:
                self._as_prose(text)
            return
        items = obj if isinstance(obj, list) else [obj]
        if not strict and not looks_like_calls(items, self._tools, every=True):
            self._as_prose(text)
            return
        if not items:
            self._error(f"empty call list in ```{k.lang} block", text)
        for item in items:
            try:
                name, args = name_and_arguments(item, f"```{k.lang} block")
            except BadCall as exc:
                self._error(str(exc), text)
                continue
            self._call(name, args, "fenced_json", text)

    def _at_arrow(self) -> bool | None:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        nl = buf.find("\n", pos, pos + _WINDOW)
        if nl < 0:
            if not self._eof and n - pos < _WINDOW:
                # Decide early when the line can no longer become RUN COMMAND or WRITE FILE.
                if _skip(_ARROW_VIABLE, buf, pos) < n:
                    if not _ARROW_KEYWORD.match(buf, pos):
                        return None
                return False
            if n - pos >= _WINDOW:
                return None
            nl = n
        line = buf[pos:nl]
        run = _RUN_COMMAND.fullmatch(line)
        write = _WRITE_FILE.fullmatch(line) if run is None else None
        if run is None and write is None:
            return None
        self._prose_to(pos + len(line) - len(line.lstrip(" \t")))
        k = self._start("arrow", self._st_arrow_next)
        k.syntax = "arrow_block"
        if run is not None and run.group(1):
            self._take(nl - (1 if line.endswith("\r") else 0))
            self._arrow_command(run.group(1), self._done())
            return True
        if write is not None:
            path = write.group(1).strip().strip("`'\"")
            if not path:
                self._take(nl)
                self._error(
                    "WRITE FILE without a path; expected >>> WRITE FILE: path/to/file "
                    "followed by a fenced code block",
                    self._done(),
                )
                return True
            k.name, k.mode = path, "write"
        else:
            k.mode = "run"
        self._take(min(n, nl + 1))
        return True

    def _st_arrow_next(self) -> bool:
        """After an arrow line: skip blank lines, then a fence or (for RUN COMMAND) a line."""
        k = self._k
        buf, n = self._buf, len(self._buf)
        blank = _skip(_BLANK_LINES, buf, self._pos)
        if not self._take(blank):
            return True
        pos = self._pos
        if pos >= n and not self._eof:
            return False
        m = _FENCE_OPEN.match(buf, pos)
        if m is None and not self._eof and _ARROW_NEXT_PARTIAL.fullmatch(buf, pos):
            return False  # the start of a fence, or of a blank line cut before its line feed
        if m is not None:
            if m.end() >= n and not self._eof:
                return False
            got = self._at_fence(m, k.mode)
            return bool(got) if got is not None else True
        if k.mode == "run" and pos < n:
            k.value_start = self._acc_n
            self._state = self._st_arrow_line
            return True
        text = self._done()
        what = (
            f"WRITE FILE: {k.name} must be followed by a fenced code block holding the content"
            if k.mode == "write"
            else "RUN COMMAND must be followed by the command on the next line"
        )
        self._error(f"{what}; nothing was run", text)
        return True

    def _st_arrow_line(self) -> bool:
        buf, pos, n = self._buf, self._pos, len(self._buf)
        nl = buf.find("\n", pos)
        if nl < 0 and not self._eof:
            return not self._take(n - (1 if buf.endswith("\r") else 0))
        end = n if nl < 0 else nl
        if not self._take(end - (1 if end > pos and buf[end - 1] == "\r" else 0)):
            return True
        k = self._k
        text = self._done()
        self._arrow_command(text[k.value_start :].strip(), text)
        return True

    def _arrow_command(self, command: str, raw: str) -> None:
        if not command:
            self._error("RUN COMMAND without a command; nothing was run", raw)
            return
        tests = _PYTEST.match(command) and "run_tests" in self._tools
        name = "run_tests" if tests else "run_command"
        self._call(name, {"command": command}, "arrow_block", raw)


# ---------------------------------------------------------------------------------------------
# Helpers shared by the states.

_PY_OUT = re.compile(r"[\[\](){}'\"]")
_PY_IN = {
    "'": re.compile(r"[\\'\n]"),
    '"': re.compile(r'[\\"\n]'),
    "'''": re.compile(r"\\|'''"),
    '"""': re.compile(r'\\|"""'),
}
_IN_STRING = re.compile(r'["\\]')
_OUT_STRING = re.compile(r'[\[\]{}"]')
_NESTED_TAG = re.compile(r"</tool>|<tool[\s:>]")
_NESTED_HERMES = re.compile(r"</?tool_call>")
_QWEN_VALUE_END = re.compile(r"</parameter>|<parameter=|</function>")
_FENCE_CANDIDATE = {c: re.compile(r"\n(?=[ \t]*" + re.escape(c * 3) + ")") for c in "`~"}
_FENCE_CLOSE = {c: re.compile(r"[ \t]*(" + re.escape(c) + r"{3,})[ \t]*\r?") for c in "`~"}
_FENCE_CLOSE_VIABLE = {c: re.compile(r"[ \t]*" + re.escape(c) + r"*[ \t]*\r?") for c in "`~"}


def _hermes_value(text: str) -> Any:
    """Objects separated by commas in one `<tool_call>`, as a list; None for anything else."""
    if not text.startswith("{") or is_json(text):
        return None
    try:
        value = json.loads(f"[{text}]", strict=False)
    except (ValueError, RecursionError):
        return None
    return value if all(isinstance(v, dict) for v in value) else None


def _skip(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where a match of a pattern that matches the empty text ends."""
    m = pattern.match(text, pos)
    assert m is not None
    return m.end()


def _inline_code(run: str, info: str) -> bool:
    """Whether a line-start run of backticks opens inline code rather than a fence."""
    return run[0] == "`" and "`" in info


def _closes_fence(fchar: str, flen: int, line: str) -> bool:
    """Whether a whole body line closes a fence: its character's run, as long, and blanks."""
    c = _FENCE_CLOSE[fchar].fullmatch(line)
    return c is not None and len(c.group(1)) >= flen


def _fence_lang(info: str) -> str:
    """A fence's language: the first word of its info string."""
    return (info.strip().split() or [""])[0].lower()


def _set_fence(k: _Construct, run: str, lang: str, mode: str) -> None:
    k.fchar, k.flen, k.lang, k.mode = run[0], len(run), lang, mode
    k.cand_re = _FENCE_CANDIDATE[run[0]]


def _what(k: _Construct) -> str:
    if k.kind == "tag":
        return f'<tool name="{k.name}">' if k.name else "<tool>"
    if k.kind == "hermes":
        return "<tool_call>"
    if k.kind == "fence":
        return f"```{k.lang}" if k.lang else "fenced block"
    if k.kind == "arrow":
        return "WRITE FILE block" if k.mode == "write" else "RUN COMMAND block"
    if k.kind == "mistral":
        return "[TOOL_CALLS]"
    if k.kind == "pytag":
        return "<|python_tag|> call"
    return k.syntax.replace("_", " ") + " call"


def _expected(k: _Construct) -> str:
    if k.kind == "mistral":
        return '[TOOL_CALLS][{"name": "NAME", "arguments": {…}}] or ' + EXPECTED
    return EXPECTED
