"""The context budget: keep every request inside the model's window, with room for the answer.

Tokens are estimated from UTF-8 bytes at `BYTES_PER_TOKEN` (3.0: English prose runs near 4
bytes a token in the common BPE vocabularies, code and JSON nearer 3, so 3 errs on the side of
a smaller request). When the endpoint reports `usage.prompt_tokens`, the ratio is corrected
from what it counted. A tokenizer would need the model's own vocabulary, which an
OpenAI-compatible endpoint does not hand out; the estimate plus the correction serves any of them.

What gives way, in order: older tool outputs become a one-line stub; then older turns are
summarised by one model call (done by the caller, which owns the model). The latest user turn
and the calls of the current step are never cut.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

BYTES_PER_TOKEN = 3.0
DEFAULT_CONTEXT_TOKENS = 16_384
MESSAGE_OVERHEAD = 4  # role and separators, per message, as chat templates add them


@dataclass
class Entry:
    """One message of a conversation, with what the budget needs to know about it."""

    turn: int
    message: dict[str, Any]
    size: int  # UTF-8 bytes of its text
    tools: tuple[str, ...] = ()  # the tools whose output it carries (a tool result)
    _stub: str | None = field(default=None, repr=False)

    @classmethod
    def of(cls, turn: int, message: dict[str, Any], tools: tuple[str, ...] = ()) -> Entry:
        """An entry, its size measured once."""
        return cls(turn, message, message_bytes(message), tools)

    @property
    def elidable(self) -> bool:
        """Whether the entry is a tool output that a stub may stand in for."""
        return bool(self.tools)

    def stub(self) -> str:
        """The one line that replaces this output when it is elided."""
        if self._stub is None:
            self._stub = _stub_text(self)
        return self._stub

    def elided(self) -> dict[str, Any]:
        """The message with its output replaced by the stub."""
        return {**self.message, "content": self.stub()}


def message_bytes(message: dict[str, Any]) -> int:
    """The UTF-8 size of what a message sends: its content and its calls' arguments."""
    size = len(str(message.get("content") or "").encode("utf-8", "backslashreplace"))
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        size += len(str(function.get("name", ""))) + len(str(function.get("arguments", "")))
    return size


def _stub_text(entry: Entry) -> str:
    content = str(entry.message.get("content") or "")
    detail = ""
    try:
        doc = json.loads(content)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        data = doc.get("data")
        main = data.get("output", data.get("content")) if isinstance(data, dict) else None
        # the output a person would count lines of, else every string the result holds
        text = main if isinstance(main, str) else "\n".join(_strings(data))
        summary = data.get("summary") if isinstance(data, dict) else None
        if isinstance(summary, dict) and summary.get("failed") is not None:
            detail = f", {summary['failed']} failed"
        if doc.get("error"):
            detail += ", failed: " + str(doc["error"]).splitlines()[0][:80]
    else:
        text = content
    lines = text.count("\n") + 1 if text else 0
    names = ", ".join(dict.fromkeys(entry.tools))
    return f"[output of {names} from turn {entry.turn} elided: {lines} lines{detail}]"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@dataclass
class Budget:
    """The model's window and the share of it kept for the answer."""

    window: int = DEFAULT_CONTEXT_TOKENS
    reserve: int | None = None  # tokens kept for the answer; default a quarter, at most 4096
    bytes_per_token: float = BYTES_PER_TOKEN
    # Whether the window is known (configured or reported) or the 16k guess: a request over a
    # guess is still sent, since the model may well take it.
    known: bool = True
    # Bytes of the conversation elided together (see `fit`): set by the run's first request,
    # before any correction of the ratio, and kept, so that the stretches stay where they are.
    stretch: int | None = None

    @property
    def answer_tokens(self) -> int:
        """Tokens kept free for the model's answer."""
        if self.reserve is not None:
            return self.reserve
        return min(4096, self.window // 4)

    @property
    def limit(self) -> int:
        """Tokens a request may hold."""
        return self.window - self.answer_tokens

    def tokens(self, size: int) -> int:
        """Estimated tokens for a number of UTF-8 bytes."""
        return int(size / self.bytes_per_token) + 1

    def message_tokens(self, size: int) -> int:
        """Estimated tokens of one message of `size` bytes."""
        return self.tokens(size) + MESSAGE_OVERHEAD

    def learn(self, sent_bytes: int, prompt_tokens: int) -> None:
        """Correct the ratio from what the endpoint counted (never towards larger requests)."""
        if prompt_tokens > 0 and sent_bytes > 0:
            measured = sent_bytes / prompt_tokens
            self.bytes_per_token = max(1.0, min(BYTES_PER_TOKEN, measured * 0.95))

    def output_bytes(self) -> int:
        """How many bytes one tool result may take: a third of what a request may hold."""
        return int(self.limit * self.bytes_per_token / 3)


@dataclass
class Fit:
    """A request's messages once fitted, and what was done to them."""

    messages: list[dict[str, Any]]
    tokens: int
    fits: bool
    elided: list[str] = field(default_factory=list)  # the stubs, in the order they were made


def fit(budget: Budget, fixed_tokens: int, earlier: list[Entry], current: list[Entry]) -> Fit:
    """Elide older tool outputs, oldest first and a stretch at a time, until the request fits.

    `earlier` holds the turns before this one; `current` this turn, from its user message. The
    tool results after the current turn's last assistant message are never elided, nor is
    any message that is not a tool output.

    Outputs go by stretches of the conversation (`stretch_bytes`, measured from its start, so a
    message stays in its stretch as the conversation grows), a whole stretch at once. The
    requests after an elision then begin with the same messages until the conversation has
    grown by about a stretch, and a server that keeps the prompt it last read (llama.cpp,
    vLLM's prefix cache, the hosted APIs' prompt caches) reads only what is new. Eliding one
    output at a time would change an early message on nearly every step once the window is
    full: each step would cost a whole prompt.
    """
    if budget.stretch is None:
        budget.stretch = stretch_bytes(budget, fixed_tokens)
    entries = [*earlier, *current]
    costs = [budget.message_tokens(e.size) for e in entries]
    total = fixed_tokens + sum(costs)
    keep_from = len(earlier) + _last_step_start(current)
    replaced: dict[int, str] = {}
    if total > budget.limit:
        stretch = budget.stretch
        offset = last = 0
        for index in range(keep_from):
            entry = entries[index]
            at = offset
            offset += entry.size
            if replaced and total <= budget.limit and at // stretch > last // stretch:
                break  # the stretch of the last elided output is done, and the request fits
            if not entry.elidable:
                continue
            stub = entry.stub()
            saved = costs[index] - budget.message_tokens(len(stub.encode("utf-8")))
            if saved <= 0:
                continue
            replaced[index] = stub
            total -= saved
            last = at
    messages = [e.elided() if i in replaced else e.message for i, e in enumerate(entries)]
    return Fit(messages, total, total <= budget.limit, [replaced[i] for i in sorted(replaced)])


def stretch_bytes(budget: Budget, fixed_tokens: int) -> int:
    """How much of the conversation's text is elided together: half the room its messages have.

    Smaller stretches keep more old outputs but make the server read the prompt again more
    often, and reading it again is what a long session pays most for on a small machine
    (docs/ARCHITECTURE.md).
    """
    return max(1, int((budget.limit - fixed_tokens) * BYTES_PER_TOKEN / 2))


def _last_step_start(current: list[Entry]) -> int:
    """Where the current turn's last step begins: its last assistant message."""
    for index in range(len(current) - 1, -1, -1):
        if current[index].message.get("role") == "assistant":
            return index
    return len(current)


SUMMARY_INSTRUCTION = (
    "Summarise the conversation above for yourself, so that you can continue the work without "
    "it. Keep: what the person asked for and their preferences; every file changed and how; "
    "decisions made and why; tests run and failures still open; what is left to do. Plain "
    "sentences or a short list, at most 250 words. Do not call any tool."
)


def summary_request(
    budget: Budget, previous: str | None, entries: list[Entry], max_tokens: int
) -> list[dict[str, Any]]:
    """The messages of the one model call that summarises `entries` (and an earlier summary).

    The transcript is shortened to fit `max_tokens`: each message is capped, and if that is not
    enough the oldest messages go first (the earlier summary is kept).
    """
    per_message = 1_500
    lines: list[str] = []
    for entry in entries:
        lines.append(_render(entry, per_message))
    header = f"Summary of the turns before:\n{previous}\n\n" if previous else ""
    room = int(max_tokens * budget.bytes_per_token) - len(SUMMARY_INSTRUCTION) - len(header) - 200
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        size = len(line.encode("utf-8", "backslashreplace")) + 1
        if used + size > room:
            kept.append("[earlier messages left out]")
            break
        kept.append(line)
        used += size
    transcript = header + "\n".join(reversed(kept))
    return [
        {"role": "system", "content": "You write brief, exact working notes."},
        {"role": "user", "content": f"{transcript}\n\n{SUMMARY_INSTRUCTION}"},
    ]


def _render(entry: Entry, cap: int) -> str:
    message = entry.message
    role = message.get("role", "?")
    text = str(message.get("content") or "")
    if entry.tools:
        role = f"result of {', '.join(entry.tools)}"
    calls = [
        f"{c.get('function', {}).get('name')}({c.get('function', {}).get('arguments', '')})"
        for c in message.get("tool_calls") or []
    ]
    if calls:
        text = (text + "\n" if text else "") + "calls: " + "; ".join(calls)
    if len(text) > cap:
        text = text[: cap // 2] + " … " + text[-cap // 2 :]
    return f"[turn {entry.turn}] {role}: {text}"
