"""Where each run of a transcript stands with undo, read from the workspace's checkpoints.

A transcript keeps how a run ended; whether it can still be undone is a fact of the disk (an
undo, by any front end, marks the checkpoint), so it is read when the session is loaded. An
undo made outside an editor's session (a terminal) is kept in the session of the run it undid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolgate.agent.checkpoints import Checkpoint, CheckpointError
from toolgate.agent.runlog import RunLogError, read_run_log


def add_undo_state(root: Path, entries: list[dict[str, Any]]) -> None:
    """Give each `run` entry its changed `files` and `undo` (available | undone | none)."""
    for entry in entries:
        if entry.get("kind") != "run":
            continue
        try:
            checkpoint = Checkpoint.load(root, str(entry.get("runId")))
        except CheckpointError:
            entry.setdefault("files", [])
            entry["undo"] = "none"
            continue
        landed = checkpoint.landed
        entry["files"] = landed or list(entry.get("files") or [])
        if checkpoint.undoes:
            entry["undoes"] = checkpoint.undoes
        if checkpoint.undone_by:
            entry["undo"] = "undone"
            entry["undoneBy"] = checkpoint.undone_by
        else:
            entry["undo"] = "available" if landed else "none"


def session_of_run(root: Path, run_id: str) -> str | None:
    """The session a run was a turn of; for an undo, that of the run it undid (down the chain)."""
    seen: set[str] = set()
    while run_id not in seen:
        seen.add(run_id)
        try:
            session_id = read_run_log(root, run_id).get("session_id")
        except RunLogError:
            session_id = None  # an undo has a checkpoint and no run log
        if session_id:
            return str(session_id)
        try:
            undid = Checkpoint.load(root, run_id).undoes
        except CheckpointError:
            return None
        if not undid:
            return None
        run_id = undid
    return None
