"""Undo (and so redo) of a run, the one way every front end does it.

The front end says only how to ask the person (with the plan to show) and how to apply the
restore: to disk, or through its editor (`workspace/applyEdit`, `fs/write_text_file`). The
rest is done here, the same for all: the plan from the run's checkpoint, the undo's own
checkpoint (so the undo can be undone in turn: a redo), the undone run marked as undone, and
the undo kept in a session's conversation. A restore that fails or is refused leaves no record
of an undo that did not happen.

A front end takes from here what its ask and apply are handed (`UndoPlan`, each file's action:
`REMOVE`, `CONFLICT`, …) and the disk's share of an apply (`restore_on_disk`, `disk_text`).
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgate.agent.checkpoints import Checkpoint, CheckpointError, latest_run
from toolgate.agent.undo import CONFLICT as CONFLICT
from toolgate.agent.undo import REMOVE as REMOVE
from toolgate.agent.undo import UndoPlan as UndoPlan
from toolgate.agent.undo import begin_undo, finish_undo, plan_undo
from toolgate.agent.undo import disk_text as disk_text
from toolgate.agent.undo import restore_on_disk as restore_on_disk
from toolgate.workspace import Workspace
from toolgate.workspace.sandbox import Buffers

AskUndo = Callable[[UndoPlan], Awaitable[bool]]
"""Shows the plan to the person and says whether they want it done."""

ApplyUndo = Callable[[Workspace, UndoPlan], Awaitable[Mapping[str, str] | None]]
"""Carries the plan's changes out. Returns the text written through an editor, by path (it
may sit unsaved in a buffer, and a later undo of this undo finds it there); None when every
file was written to disk. Raises when nothing was changed (the editor refused the edit)."""

ReadFirst = Callable[[str], Awaitable[None]]
"""Fetches the editor's text of a file into the buffers before the plan is made."""


async def on_disk(workspace: Workspace, plan: UndoPlan) -> Mapping[str, str] | None:
    """The restore of a front end without an editor: atomic writes, made files removed."""
    restore_on_disk(workspace, plan.changes)
    return None


@dataclass
class UndoDone:
    """What an undo found, and what it did."""

    plan: UndoPlan
    dry_run: bool = False
    declined: bool = False  # the person kept the run's changes
    undo_run_id: str | None = None  # the undo's own run, which can be undone; None: no undo
    session_id: str | None = None  # the session the undo was kept in

    def to_dict(self) -> dict[str, Any]:
        """The plan and the outcome as JSON (`toolgate undo --json`, `toolgate.undoRun`)."""
        payload: dict[str, Any] = self.plan.to_dict()
        payload["dryRun"] = self.dry_run
        if self.undo_run_id is not None:
            payload["undoRunId"] = self.undo_run_id
        if self.session_id is not None:
            payload["sessionId"] = self.session_id
        return payload


async def undo_run(
    root: Path,
    run_id: str | None,
    *,
    force: bool = False,
    dry_run: bool = False,
    ask: AskUndo | None = None,
    apply: ApplyUndo = on_disk,
    buffers: Buffers | None = None,
    read_first: ReadFirst | None = None,
    keep: Callable[[str, str, list[str]], str | None],
) -> UndoDone:
    """Plan the undo of `run_id` (default: the latest run), ask, apply, record and keep it.

    `keep(undo run, run undone, files)` keeps the undo in a conversation and names the session.
    Raises CheckpointError when there is nothing to undo; what `apply` raises passes up, after
    the undo's own record is removed.
    """
    workspace = Workspace(root)
    if buffers is not None:
        workspace.buffers = buffers
    if read_first is not None:
        for path in _changed_by(root, run_id):
            await read_first(path)
    plan = plan_undo(workspace, run_id, force=force)
    done = UndoDone(plan, dry_run=dry_run)
    if dry_run or not plan.changes:
        return done
    if ask is not None and not await ask(plan):
        done.declined = True
        return done
    record = begin_undo(workspace, plan, _shown(workspace, plan))
    try:
        written = await apply(workspace, plan)
    except BaseException:
        # Nothing was undone (or the rest is the person's to see): no record claims it was.
        shutil.rmtree(record.folder, ignore_errors=True)
        raise
    finish_undo(workspace, plan, record, written)
    done.undo_run_id = record.run_id
    done.session_id = keep(record.run_id, plan.run_id, [item.path for item in plan.changes])
    return done


def undoable(root: Path) -> bool:
    """Whether the workspace's latest run has changes that can be put back."""
    run_id = latest_run(root)
    if run_id is None:
        return False
    try:
        return Checkpoint.load(root, run_id).undone_by is None
    except CheckpointError:
        return False


def _changed_by(root: Path, run_id: str | None) -> list[str]:
    """The files a run's checkpoint holds (none when there is no such run)."""
    chosen = run_id or latest_run(root)
    if chosen is None:
        return []
    try:
        return list(Checkpoint.load(root, chosen).files)
    except CheckpointError:
        return []


def _shown(workspace: Workspace, plan: UndoPlan) -> dict[str, str]:
    """The editor's text of each file the undo changes, where the editor holds it."""
    held = workspace.buffers()
    shown: dict[str, str] = {}
    for item in plan.changes:
        text = held.get(workspace.resolve(item.path, for_write=True))
        if text is not None:
            shown[item.path] = text
    return shown
