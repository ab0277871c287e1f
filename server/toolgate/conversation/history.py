"""A conversation: every message the model saw, turn by turn, and the note that replaced old turns.

It is built from a session file's records and appends its own as the run goes, so what is on
disk is always what the next request will be built from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolgate.conversation.budget import Entry
from toolgate.conversation.marks import MarkReader, run_entry
from toolgate.conversation.rewind import REWIND, read_rewinds, rewind_entry
from toolgate.conversation.store import Loaded, SessionFile, now_iso

Redact = Callable[[Any], Any]


@dataclass
class Conversation:
    """The messages of a session, and where they are kept (in memory only without a file)."""

    file: SessionFile | None = None
    session_id: str | None = None
    title: str = ""
    created: str = field(default_factory=now_iso)
    last_activity: str = ""
    entries: list[Entry] = field(default_factory=list)
    summary: str | None = None
    summarised_through: int = 0
    turns: int = 0
    # The context the last turn left: `used` tokens (the endpoint's count of the last request
    # and its answer, else the estimate) of a window of `size`; None before any turn kept it.
    context: dict[str, int] | None = None
    notices: list[str] = field(default_factory=list)
    # The run of each turn the model still knows of, and those it was last told were undone.
    runs: list[tuple[int, str]] = field(default_factory=list)
    undone_told: list[str] = field(default_factory=list)
    redact: Redact = field(default=lambda value: value, repr=False)
    # Called once a turn's end is on disk: the session is whole again and free for others
    # before the run announces its end.
    on_turn_end: Callable[[], None] | None = field(default=None, repr=False)
    _current_from: int = 0  # index of the current turn's first entry

    @classmethod
    def from_loaded(cls, loaded: Loaded, file: SessionFile | None) -> Conversation:
        """Rebuild a conversation from its records."""
        header = loaded.header
        conversation = cls(
            file=file,
            session_id=str(header.get("id")),
            title=str(header.get("title") or ""),
            created=str(header.get("created") or ""),
            last_activity=str(header.get("created") or ""),
            notices=list(loaded.notices),
        )
        pending: list[Entry] = []  # the turn being read: kept only once it has ended
        told: list[str] = []  # the runs the turn being read told the model were undone
        # Messages of turns a summary replaced are never read again: skip building them.
        replaced = max(
            (int(r.get("through_turn", 0)) for r in loaded.records if r.get("t") == "summary"),
            default=0,
        )
        # Turns a rewind took back: kept in the file for the transcript, never sent again.
        dropped = read_rewinds(loaded.records).dropped
        for record in loaded.records:
            kind = record.get("t")
            if kind in ("turn", "msg", "end") and int(record.get("turn", 0)) in dropped:
                conversation.turns = max(conversation.turns, int(record.get("turn", 0)))
                pending = []
                continue
            if kind == "turn":
                pending = []
                if not conversation.title:
                    conversation.title = title_of(str(record.get("text") or ""))
                conversation.turns = max(conversation.turns, int(record.get("turn", 0)))
                if record.get("run_id"):
                    conversation.runs.append((int(record.get("turn", 0)), str(record["run_id"])))
                told = [str(r) for r in record.get("undone") or []]
                conversation.last_activity = str(record.get("time") or conversation.last_activity)
            elif kind == "msg":
                message = record.get("m")
                if isinstance(message, dict) and int(record.get("turn", 0)) > replaced:
                    tools = tuple(str(t) for t in record.get("tools") or ())
                    pending.append(Entry.of(int(record.get("turn", 0)), message, tools))
            elif kind == "end":
                conversation.entries.extend(_consistent(pending))
                pending = []
                conversation.undone_told = told  # a turn cut short: the model never read it
                conversation.context = _context(record.get("context")) or conversation.context
                conversation.last_activity = str(record.get("time") or conversation.last_activity)
            elif kind == "title":
                conversation.title = str(record.get("title") or "")
            elif kind == "summary":
                through = int(record.get("through_turn", 0))
                if not record.get("text"):  # set aside: the model knows nothing of them
                    conversation.runs = [(t, r) for t, r in conversation.runs if t > through]
                conversation.summary = str(record.get("text") or "")
                conversation.summarised_through = through
                conversation.entries = [e for e in conversation.entries if e.turn > through]
        if pending:
            # A turn without its end was cut short by a crash: its messages may stop in the
            # middle of a call, which no endpoint accepts, so the model does not see them.
            conversation.notices.append(
                f"turn {conversation.turns} of session {conversation.session_id} did not finish; "
                "its messages are left out of the conversation"
            )
        conversation._current_from = len(conversation.entries)
        return conversation

    # -- writing ----------------------------------------------------------------------------

    def _write(self, *records: dict[str, Any]) -> None:
        if self.file is not None:
            self.file.append_many([self.redact(r) for r in records])

    def begin_turn(
        self,
        run_id: str,
        text: str,
        *,
        note: str = "",
        undone: list[str] | None = None,
        attached: dict[str, Any] | None = None,
    ) -> int:
        """Start a turn with the person's words; returns its number.

        `note` goes before the words in what the model reads (the transcript keeps the words
        alone); `undone` are the runs the model now knows to be undone (`agent.undo_news`);
        `attached` is what the words' `@` mentions attached (`items`, `refused`), so the
        transcript shows it with the turn.
        """
        self.turns += 1
        self._current_from = len(self.entries)
        self.last_activity = now_iso()
        message = {"role": "user", "content": f"{note}\n\n{text}" if note else text}
        self.entries.append(Entry.of(self.turns, message))
        if undone is not None:
            self.undone_told = list(undone)
        self.runs.append((self.turns, run_id))
        record: dict[str, Any] = {
            "t": "turn",
            "turn": self.turns,
            "run_id": run_id,
            "text": text,
            "undone": self.undone_told,
            "time": self.last_activity,
        }
        if attached:
            record["attached"] = attached
        self._write(record, {"t": "msg", "turn": self.turns, "m": message})
        if not self.title:
            self.title = title_of(text)
        return self.turns

    def add(self, message: dict[str, Any], tools: tuple[str, ...] = ()) -> None:
        """Add a message of the current turn, as the model saw it."""
        self.add_many([(message, tools)])

    def add_many(self, items: list[tuple[dict[str, Any], tuple[str, ...]]]) -> None:
        """Add several messages at once (one write for all)."""
        records = []
        for message, tools in items:
            self.entries.append(Entry.of(self.turns, message, tools))
            record: dict[str, Any] = {"t": "msg", "turn": self.turns, "m": message}
            if tools:
                record["tools"] = list(tools)
            records.append(record)
        self._write(*records)

    def record_call(self, run_id: str, entry: dict[str, Any]) -> None:
        """Keep one tool call as the transcript shows it."""
        self._write({"t": "call", "turn": self.turns, "run_id": run_id, **entry})

    def end_turn(
        self,
        run_id: str,
        status: str,
        reason: str | None,
        answer: str | None,
        context: dict[str, int] | None = None,
        rules: list[str] | None = None,
    ) -> None:
        """Close the current turn with its outcome and, when known, the context it left.

        `rules` are the rules files the turn used, kept so a transcript drawn later names them.
        """
        self.last_activity = now_iso()
        record: dict[str, Any] = {
            "t": "end",
            "turn": self.turns,
            "run_id": run_id,
            "status": status,
            "reason": reason,
            "answer": answer,
            "time": self.last_activity,
        }
        if context is not None:
            record["context"] = context
            self.context = context
        if rules:
            record["rules"] = list(rules)
        self._write(record)
        # What the turn left behind must be a history the next request can be built from.
        current = self.entries[self._current_from :]
        self.entries[self._current_from :] = _consistent(current)
        self._current_from = len(self.entries)
        if self.on_turn_end is not None:
            self.on_turn_end()

    def set_title(self, title: str) -> None:
        """Rename the session."""
        self.title = title
        self._write({"t": "title", "title": title, "time": now_iso()})

    def replace_with_summary(self, text: str) -> int:
        """Replace every turn before the current one with a note; returns the last turn replaced."""
        through = self.turns - 1
        self._write({"t": "summary", "through_turn": through, "text": text, "time": now_iso()})
        self.summary = text
        self.summarised_through = through
        kept = self.entries[self._current_from :]
        self.entries = kept
        self._current_from = 0
        return through

    def set_aside(self) -> int:
        """Start afresh: no earlier turn is sent to the model again (the transcript keeps them).

        Kept as a summary with no text, so a session file read later leaves them out too.
        Returns the last turn set aside.
        """
        self._write({"t": "summary", "through_turn": self.turns, "text": "", "time": now_iso()})
        self.runs = []
        self.summary = ""
        self.summarised_through = self.turns
        self.entries = []
        self._current_from = 0
        return self.turns

    # -- reading ----------------------------------------------------------------------------

    def earlier(self) -> list[Entry]:
        """The entries of the turns before the current one."""
        return self.entries[: self._current_from]

    def current(self) -> list[Entry]:
        """The entries of the current turn, from its user message."""
        return self.entries[self._current_from :]

    def summary_note(self) -> str:
        """What the first message of a request says of the summarised turns."""
        if not self.summary:
            return ""
        return (
            f"\n\nEarlier in this conversation (turns 1–{self.summarised_through}, summarised):\n"
            f"{self.summary}"
        )


def _consistent(entries: list[Entry]) -> list[Entry]:
    """The entries without an assistant's calls whose results never came (and those results)."""
    answered = {
        str(e.message.get("tool_call_id")) for e in entries if e.message.get("role") == "tool"
    }
    out: list[Entry] = []
    dropped: set[str] = set()
    for entry in entries:
        calls = entry.message.get("tool_calls") or []
        ids = {str(c.get("id")) for c in calls}
        if calls and not ids <= answered:
            dropped |= ids
            text = entry.message.get("content")
            if text:
                out.append(Entry.of(entry.turn, {"role": "assistant", "content": text}))
            continue
        if (
            entry.message.get("role") == "tool"
            and str(entry.message.get("tool_call_id")) in dropped
        ):
            continue
        out.append(entry)
    return out


def _context(value: Any) -> dict[str, int] | None:
    """A stored turn's context (`used` of `size` tokens), or None when it is missing or odd."""
    if not isinstance(value, dict):
        return None
    used, size = value.get("used"), value.get("size")
    if type(used) is not int or type(size) is not int or used < 0 or size < 0:
        return None
    return {"used": used, "size": size}


def title_of(text: str) -> str:
    """A session's title from its first message: one line, cut at 60 characters."""
    first = " ".join(text.split())
    return first if len(first) <= 60 else first[:57].rstrip() + "…"


def transcript(loaded: Loaded) -> list[dict[str, Any]]:
    """The entries a client draws: the person's and the assistant's words, calls and notes.

    Each run's end is an entry of kind `run`, and plans are entries of kind `plan` with what
    became of them (`conversation.marks`). A rewind is an entry of kind `rewind`; the entries
    of the turns it took back carry `rewound` (`conversation.rewind`).
    """
    out: list[dict[str, Any]] = []
    current_run: Any = None
    marks = MarkReader()
    rewinds = read_rewinds(loaded.records)
    dropped = rewinds.dropped
    asked: dict[Any, dict[str, Any]] = {}  # each run's words, to name the rules its end kept
    for record in loaded.records:
        kind = record.get("t")
        run_id = record.get("run_id")
        start = len(out)
        if kind == "turn":
            current_run = run_id
            asked[run_id] = user = {
                "kind": "user",
                "text": str(record.get("text", "")),
                "runId": run_id,
                "turn": record.get("turn"),
                "time": record.get("time"),  # the client names the run by it
            }
            attached = record.get("attached")
            if isinstance(attached, dict):  # what the turn's `@` mentions attached
                user["attached"] = list(attached.get("items") or [])
                user["notAttached"] = list(attached.get("refused") or [])
            out.append(user)
        elif kind == "msg":
            message = record.get("m") or {}
            if message.get("role") == "assistant" and message.get("content"):
                out.append(
                    {"kind": "assistant", "text": str(message["content"]), "runId": current_run}
                )
        elif kind == "call":
            entry = {
                "kind": "tool",
                "runId": run_id,
                "callId": record.get("call_id"),
                "name": record.get("name"),
                "arguments": record.get("arguments") or {},
                "status": record.get("status"),
                "summary": record.get("summary") or "",
            }
            if record.get("proposal_id"):
                entry["proposalId"] = record["proposal_id"]
            if record.get("kind"):  # what the tool does; sessions kept before it was kept lack it
                entry["toolKind"] = record["kind"]
            out.append(entry)
        elif kind == "end":
            if record.get("rules") and run_id in asked:
                asked[run_id]["rules"] = [str(rule) for rule in record["rules"]]
            if record.get("status") not in ("completed", None):
                reason = record.get("reason") or ""
                out.append(
                    {"kind": "note", "text": f"run {record.get('status')}: {reason}".strip()}
                )
            if run_id:
                out.append(run_entry(record))
        elif kind == "summary" and not record.get("text"):
            through = record.get("through_turn")
            out.append({"kind": "note", "text": f"turns 1–{through} were set aside"})
        elif kind == "summary":
            out.append(
                {
                    "kind": "note",
                    "text": f"turns 1–{record.get('through_turn')} were summarised: "
                    f"{record.get('text', '')}",
                }
            )
        elif kind == REWIND:
            rewind_id = str(record.get("rewind_id"))
            out.append(rewind_entry(record, rewind_id in rewinds.undone))
        else:
            mark = marks.entry(record)
            if mark is not None:
                out.append(mark)
        if kind in ("turn", "msg", "call", "end") and record.get("turn") in dropped:
            for entry in out[start:]:
                entry["rewound"] = True  # the model no longer sees it
    return out
