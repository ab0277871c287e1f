"""Rewind a session to one of its turns: the code, the conversation, or both; and take it back.

The code is rewound as `toolgate undo` puts a run back: each later run of the session that
changed files is undone, latest first, each undo a run of its own kept in the session (so it
can be redone), and a file the person changed since is left alone and named. The conversation
is rewound by one record (`conversation.rewind`): the later turns stay in the file, marked,
and the model no longer sees them. Taking the rewind back undoes its undos and lets the model
see its turns again, unless the conversation has gone on since.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.agent.checkpoints import Checkpoint, CheckpointError
from toolgate.conversation.rewind import read_rewinds, rewind_record, rewind_undone_record
from toolgate.conversation.store import Loaded, SessionError
from toolgate.records import new_id
from toolgate.session.undo import ApplyUndo, ReadFirst, UndoDone, undo_run
from toolgate.workspace.sandbox import Buffers

WHATS = ("both", "code", "conversation")


class RewindError(SessionError):
    """A rewind that cannot be done; the message says why and nothing was changed."""


@dataclass
class RewindDone:
    """What a rewind (or the taking back of one) did."""

    session_id: str
    rewind_id: str
    to_turn: int
    what: str
    turns: list[int] = field(default_factory=list)  # out of the conversation (or back in)
    runs: list[str] = field(default_factory=list)  # whose changes were put back (or brought back)
    undos: list[str] = field(default_factory=list)  # the undos that did it, each undoable
    left_alone: list[str] = field(default_factory=list)  # changed by the person since: untouched
    revert: list[str] = field(default_factory=list)  # how to revert commits, never rewritten
    taken_back: bool = False  # True: this took a rewind back

    def to_dict(self) -> dict[str, Any]:
        """As JSON (`toolgate.rewind`, `toolgate.undoRewind`)."""
        return {
            "sessionId": self.session_id,
            "rewindId": self.rewind_id,
            "toTurn": self.to_turn,
            "what": self.what,
            "turns": self.turns,
            "runs": self.runs,
            "undos": self.undos,
            "leftAlone": self.left_alone,
            "revert": self.revert,
            "takenBack": self.taken_back,
        }

    def said(self) -> str:
        """What was done, in one line for the person."""
        if self.taken_back:
            parts = [f"took back the rewind to turn {self.to_turn}"]
            if self.turns:
                parts.append(f"the model sees {_span(self.turns)} again")
            if self.runs:
                parts.append(f"the changes of {_count(self.runs, 'run')} are back")
        else:
            parts = [f"rewound to turn {self.to_turn}"]
            if self.turns:
                parts.append(f"the model no longer sees {_span(self.turns)}")
            if self.what != "conversation":
                parts.append(
                    f"put back the files of {_count(self.runs, 'later run')}"
                    if self.runs
                    else "no later run's changes were left to put back"
                )
        if self.left_alone:
            parts.append(f"left alone, changed since: {', '.join(self.left_alone)}")
        return "; ".join(parts)


def _span(turns: list[int]) -> str:
    return f"turns {turns[0]}–{turns[-1]}" if len(turns) > 1 else f"turn {turns[0]}"


def _count(items: list[str], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


@dataclass
class Restore:
    """How a front end writes what a rewind puts back (as `SessionService.undo` takes it)."""

    apply: ApplyUndo
    buffers: Buffers | None = None
    read_first: ReadFirst | None = None


def _later(loaded: Loaded, to_turn: int, what: str) -> tuple[list[int], list[str]]:
    """The turns after `to_turn` the model still sees, and the runs after it, in order.

    Raises RewindError for a turn that is not one to rewind to.
    """
    if what not in WHATS:
        raise RewindError(f"a rewind is of {', '.join(WHATS)}, not {what!r}")
    dropped = read_rewinds(loaded.records).dropped
    turns = sorted(
        {int(r.get("turn", 0)) for r in loaded.records if r.get("t") == "turn"} - dropped
    )
    if to_turn < 0 or (to_turn and to_turn not in turns):
        seen = ", ".join(str(t) for t in turns) or "none"
        raise RewindError(
            f"turn {to_turn} is not a turn of this session the model sees (turns: {seen})"
        )
    later = [t for t in turns if t > to_turn]
    if not later:
        raise RewindError(f"nothing to rewind: turn {to_turn} is the session's last turn")
    summarised = max(
        (
            int(r.get("through_turn", 0))
            for r in loaded.records
            if r.get("t") == "summary" and r.get("text")
        ),
        default=0,
    )
    if what != "code" and to_turn < summarised:
        raise RewindError(
            f"turns 1–{summarised} were summarised for the model; the conversation can be "
            f"rewound to turn {summarised} or later"
        )
    runs: list[str] = []
    started = False
    for record in loaded.records:
        kind = record.get("t")
        if kind == "turn" and int(record.get("turn", 0)) in later:
            started = True
        elif kind == "turn":
            continue  # a turn taken back before: its runs were that rewind's to undo
        if started and kind in ("turn", "run_end") and record.get("run_id"):
            runs.append(str(record["run_id"]))
    return later, runs


def _add_new(names: list[str], more: list[str]) -> None:
    names.extend(name for name in more if name not in names)


def _changed_and_kept(root: Path, run_id: str) -> bool:
    """Whether a run's changes are in the workspace now (landed, not undone)."""
    try:
        checkpoint = Checkpoint.load(root, run_id)
    except CheckpointError:
        return False
    return checkpoint.undone_by is None and bool(checkpoint.landed)


async def _put_back(
    root: Path,
    run_id: str,
    restore: Restore,
    keep_undo: Callable[[str, str, list[str]], str | None],
    done: RewindDone,
) -> UndoDone | None:
    """Undo one run as `toolgate undo` does, naming the files left alone in `done`.

    None when its changes are not in the workspace now (never landed, or undone since).
    """
    if not _changed_and_kept(root, run_id):
        return None
    undone = await undo_run(
        root,
        run_id,
        apply=restore.apply,
        buffers=restore.buffers,
        read_first=restore.read_first,
        keep=keep_undo,
    )
    _add_new(done.left_alone, [i.path for i in undone.plan.conflicts])
    return undone


async def rewind(
    root: Path,
    session_id: str,
    loaded: Loaded,
    to_turn: int,
    what: str,
    restore: Restore,
    *,
    keep_undo: Callable[[str, str, list[str]], str | None],
    write: Callable[[dict[str, Any]], None],
) -> RewindDone:
    """Rewind the session read as `loaded` to `to_turn`; `write` appends its record.

    Raises RewindError (nothing changed). What `restore.apply` raises passes up: the undos
    done before it stay done, each kept in the session and undoable.
    """
    later, runs = _later(loaded, to_turn, what)
    done = RewindDone(session_id, new_id("rewind"), to_turn, what)
    if what != "conversation":
        for run_id in reversed(runs):  # latest first: each finds what the later one left
            undone = await _put_back(root, run_id, restore, keep_undo, done)
            if undone is None:
                continue
            hint = undone.plan.revert_hint()
            if hint:
                done.revert.append(hint)
            if undone.undo_run_id is not None:
                done.runs.append(run_id)
                done.undos.append(undone.undo_run_id)
    if what != "code":
        done.turns = later
    if not done.turns and not done.undos and not done.left_alone:
        raise RewindError(
            f"nothing to rewind: no run after turn {to_turn} left changes to put back"
        )
    write(
        rewind_record(
            done.rewind_id,
            to_turn,
            done.turns,
            runs=done.runs,
            undos=done.undos,
            left_alone=done.left_alone,
        )
    )
    return done


async def take_back(
    root: Path,
    session_id: str,
    loaded: Loaded,
    rewind_id: str | None,
    restore: Restore,
    *,
    keep_undo: Callable[[str, str, list[str]], str | None],
    write: Callable[[dict[str, Any]], None],
) -> RewindDone:
    """Take back a rewind (default: the session's latest one still in effect).

    Its undos are undone (a redo, as `toolgate undo` of an undo), where the person has not
    changed the files since, and its turns are seen by the model again. Refused (RewindError,
    nothing changed) when a turn was added after it: that turn was answered without them.
    """
    rewinds = read_rewinds(loaded.records)
    record = rewinds.records.get(rewind_id) if rewind_id else rewinds.latest()
    if record is None:
        raise RewindError(
            f"no rewind {rewind_id} in session {session_id}"
            if rewind_id
            else f"session {session_id} has no rewind to take back"
        )
    chosen = str(record["rewind_id"])
    if chosen in rewinds.undone:
        raise RewindError(f"rewind {chosen} was already taken back")
    turns = [t for t in record.get("turns") or [] if type(t) is int]
    if turns and rewinds.started_after.get(chosen):
        raise RewindError(
            "the conversation went on after the rewind: its turns cannot come back into it "
            "(the transcript still shows them)"
        )
    done = RewindDone(
        session_id,
        chosen,
        int(record.get("to_turn") or 0),
        "conversation" if not record.get("undos") else ("both" if turns else "code"),
        turns=turns,
        taken_back=True,
    )
    redos: list[str] = []
    for undo_id in reversed([str(u) for u in record.get("undos") or []]):
        redone = await _put_back(root, undo_id, restore, keep_undo, done)
        if redone is None:
            continue  # brought back already, by hand
        if redone.undo_run_id is not None:
            redos.append(redone.undo_run_id)
            try:
                done.runs.append(Checkpoint.load(root, undo_id).undoes or undo_id)
            except CheckpointError:
                done.runs.append(undo_id)
    done.undos = redos
    write(rewind_undone_record(chosen, redos))
    return done
