"""Rewinds of a conversation: later turns taken out of what the model sees, kept in the file.

A rewind to turn N is one record naming the turns it took back (those after N the model still
saw), the runs whose changes it undid and the undos that did it. Undoing the rewind is a record
of its own naming it: its turns are seen again. Nothing is ever removed from the session file,
so a transcript still shows the rewound turns, marked as rewound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolgate.conversation.store import now_iso

REWIND = "rewind"
REWIND_UNDONE = "rewind_undone"


def rewind_record(
    rewind_id: str,
    to_turn: int,
    turns: list[int],
    *,
    runs: list[str],
    undos: list[str],
    left_alone: list[str],
) -> dict[str, Any]:
    """A rewind to `to_turn`, and what it did.

    `turns` were taken out of the conversation, the `runs` undone by `undos`, and the files the
    person changed since were `left_alone`.
    """
    return {
        "t": REWIND,
        "rewind_id": rewind_id,
        "to_turn": to_turn,
        "turns": turns,
        "runs": runs,
        "undos": undos,
        "left_alone": left_alone,
        "time": now_iso(),
    }


def rewind_undone_record(rewind_id: str, redos: list[str]) -> dict[str, Any]:
    """A rewind taken back: its turns are seen again; `redos` undid its undos."""
    return {"t": REWIND_UNDONE, "rewind_id": rewind_id, "redos": redos, "time": now_iso()}


@dataclass
class Rewinds:
    """What a session's records say of its rewinds."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # every rewind, by id
    undone: set[str] = field(default_factory=set)  # rewinds taken back
    order: list[str] = field(default_factory=list)  # rewind ids as they happened
    started_after: dict[str, int] = field(default_factory=dict)  # turns begun after each rewind

    @property
    def dropped(self) -> set[int]:
        """The turns the model no longer sees: those of every rewind not taken back."""
        out: set[int] = set()
        for rewind_id, record in self.records.items():
            if rewind_id not in self.undone:
                out.update(_turns(record))
        return out

    def latest(self) -> dict[str, Any] | None:
        """The most recent rewind not taken back, if any."""
        for rewind_id in reversed(self.order):
            if rewind_id not in self.undone:
                return self.records[rewind_id]
        return None


def read_rewinds(records: list[dict[str, Any]]) -> Rewinds:
    """The rewinds among a session's records."""
    found = Rewinds()
    for record in records:
        kind = record.get("t")
        if kind == REWIND and isinstance(record.get("rewind_id"), str):
            found.records[record["rewind_id"]] = record
            found.order.append(record["rewind_id"])
            found.started_after[record["rewind_id"]] = 0
        elif kind == REWIND_UNDONE:
            found.undone.add(str(record.get("rewind_id")))
        elif kind == "turn":
            for rewind_id in found.started_after:
                found.started_after[rewind_id] += 1
    return found


def _turns(record: dict[str, Any]) -> list[int]:
    return [t for t in record.get("turns") or [] if type(t) is int]


def rewind_entry(record: dict[str, Any], undone: bool) -> dict[str, Any]:
    """A rewind as a client draws it: where it went back to, and what it took back."""
    turns = _turns(record)
    entry: dict[str, Any] = {
        "kind": "rewind",
        "rewindId": str(record.get("rewind_id") or ""),
        "toTurn": record.get("to_turn"),
        "turns": turns,
        "runs": [str(r) for r in record.get("runs") or []],
        "undos": [str(u) for u in record.get("undos") or []],
        "leftAlone": [str(p) for p in record.get("left_alone") or []],
        "undone": undone,
    }
    said = [f"rewound to turn {record.get('to_turn')}"]
    if turns:
        span = f"turns {turns[0]}–{turns[-1]}" if len(turns) > 1 else f"turn {turns[0]}"
        said.append(f"{span} taken out of the conversation")
    if entry["runs"]:
        said.append(f"the changes of {len(entry['runs'])} run(s) undone")
    if entry["leftAlone"]:
        said.append(f"left alone, changed since: {', '.join(entry['leftAlone'])}")
    if undone:
        said.append("since taken back")
    entry["text"] = "; ".join(said)
    return entry
