"""Undo a run from its checkpoint: what would change, and changing it (itself recorded).

An undo puts every file the run changed back as it was before the run, byte for byte, and
removes the files the run created. A file somebody changed after the run is left alone and
reported, unless forced. Commits the run made are named with the command that reverts them;
they are never rewritten. The undo is a run of its own with a checkpoint, so it can be undone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from toolgate.agent.checkpoints import Checkpoint, CheckpointError, latest_run, text_digest
from toolgate.records import new_id
from toolgate.workspace import PathRefused, Workspace
from toolgate.workspace.files import BinaryFileError, atomic_write_bytes, decode_text

RESTORE = "restore"  # put the before bytes back
REMOVE = "remove"  # the run created the file: remove it
UNCHANGED = "unchanged"  # already as it was before the run
CONFLICT = "changed_since"  # somebody changed it after the run: left alone

CurrentText = Callable[[str], "str | None"]
"""Returns a file's text as the person sees it now (None when it does not exist)."""


@dataclass
class FileUndo:
    """What undo does to one file."""

    path: str
    action: str  # RESTORE | REMOVE | UNCHANGED | CONFLICT
    before: bytes | None  # the bytes to put back (None: the file did not exist)
    reason: str = ""

    @property
    def before_text(self) -> str | None:
        """The before bytes as text, as an editor shows them."""
        if self.before is None:
            return None
        try:
            return decode_text(self.before).text
        except BinaryFileError:
            return None


@dataclass
class UndoPlan:
    """What undoing a run would do."""

    run_id: str
    files: list[FileUndo] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    forced: bool = False

    @property
    def changes(self) -> list[FileUndo]:
        """The files undo changes."""
        return [f for f in self.files if f.action in (RESTORE, REMOVE)]

    @property
    def conflicts(self) -> list[FileUndo]:
        """The files left alone because somebody changed them since the run."""
        return [f for f in self.files if f.action == CONFLICT]

    def outcome(self, *, dry_run: bool = False) -> str:
        """What undoing did, or would do, in the words every front end uses."""
        n = len(self.changes)
        if not n:
            return "nothing to restore"
        files = f"{n} file{'' if n == 1 else 's'}"
        return f"would restore {files}" if dry_run else f"restored {files}"

    def left_alone(self) -> str | None:
        """The files changed since the run that undo did not touch, if any."""
        n = len(self.conflicts)
        if not n:
            return None
        if n == 1:
            return "1 file changed since the run was left alone"
        return f"{n} files changed since the run were left alone"

    def revert_hint(self) -> str | None:
        """How to revert the run's commits, which undo never rewrites."""
        if not self.commits:
            return None
        shas = " ".join(reversed(self.commits))
        short = ", ".join(c[:12] for c in self.commits)
        return (
            f"the run made {len(self.commits)} commit(s) ({short}), which undo does not "
            f"rewrite; to revert them: git revert --no-edit {shas}"
        )

    def to_dict(self) -> dict[str, object]:
        """The plan as JSON-able data (front ends show it)."""
        return {
            "runId": self.run_id,
            "files": [{"path": f.path, "action": f.action, "reason": f.reason} for f in self.files],
            "commits": self.commits,
            "revert": self.revert_hint(),
        }


def disk_text(workspace: Workspace) -> CurrentText:
    """A file's current text as the workspace reads it (editor buffers first, then disk)."""

    def read(path: str) -> str | None:
        try:
            _, found = workspace.read_or_none(path)
        except PathRefused:
            return None
        except (OSError, ValueError):
            return "\x00unreadable"  # compares unequal to anything a run left
        return found.text if found else None

    return read


def plan_undo(
    workspace: Workspace,
    run_id: str | None = None,
    *,
    force: bool = False,
    current: CurrentText | None = None,
) -> UndoPlan:
    """Work out what undoing `run_id` (default: the latest run) would do; changes nothing."""
    root = workspace.root
    chosen = run_id or latest_run(root)
    if chosen is None:
        raise CheckpointError("no run in this workspace has changed a file: nothing to undo")
    checkpoint = Checkpoint.load(root, chosen)
    if checkpoint.undone_by and not force:
        raise CheckpointError(
            f"run {chosen} was already undone by {checkpoint.undone_by}; "
            f"undo that one to bring the run's changes back"
        )
    read = current or disk_text(workspace)
    plan = UndoPlan(chosen, commits=list(checkpoint.commits), forced=force)
    for record in checkpoint.files.values():
        before = checkpoint.before_bytes(record)
        now = read(record.path)
        before_digest = text_digest(_decoded(before))
        if (
            now is None
            and before is None
            or (now is not None and before is not None and text_digest(now) == before_digest)
        ):
            plan.files.append(FileUndo(record.path, UNCHANGED, before, "as it was before the run"))
            continue
        left = record.landed and text_digest(now) == record.after
        action = REMOVE if before is None else RESTORE
        if not left and not force:
            plan.files.append(
                FileUndo(record.path, CONFLICT, before, "changed since the run; left alone")
            )
            continue
        reason = "created by the run" if action == REMOVE else "changed by the run"
        if not left:
            reason += " (and since; forced)"
        plan.files.append(FileUndo(record.path, action, before, reason))
    return plan


def _decoded(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return decode_text(raw).text
    except BinaryFileError:
        return None


def begin_undo(
    workspace: Workspace, plan: UndoPlan, editor: Mapping[str, str] | None = None
) -> Checkpoint:
    """The undo's own checkpoint, holding every file it is about to change as it is now.

    `editor` holds the editor's text of files, by path, where the undo is written through the
    editor: an unsaved buffer that differs from the disk is what the undo replaces, so it is
    what undoing the undo must bring back.
    """
    record = Checkpoint(workspace.root, new_id("undo"), undoes=plan.run_id)
    for item in plan.changes:
        real = workspace.resolve(item.path, for_write=True)
        raw = real.read_bytes() if real.is_file() else None
        shown = (editor or {}).get(item.path)
        if shown is not None and text_digest(shown) != text_digest(_decoded(raw)):
            raw = shown.encode("utf-8")
        record.before_change(item.path, raw)
    record.save()
    return record


def finish_undo(
    workspace: Workspace,
    plan: UndoPlan,
    record: Checkpoint,
    written: Mapping[str, str] | None = None,
) -> None:
    """Mark what the undo left, and the undone run as undone.

    `written` holds the text the undo wrote through the editor, by path: it may sit unsaved
    in a buffer, and it is what a later undo of this undo finds there.
    """
    read = disk_text(workspace)
    for item in plan.changes:
        left = (written or {}).get(item.path)
        record.after_change(item.path, left if left is not None else read(item.path))
    try:
        undone = Checkpoint.load(workspace.root, plan.run_id)
    except CheckpointError:
        return
    undone.undone_by = record.run_id
    undone.save()
    with contextlib.suppress(CheckpointError):
        _settle_chain(workspace.root, undone)


def _settle_chain(root: Path, changed: Checkpoint) -> None:
    """`changed` came into effect or out of it: so did, in turn, every undo it undid.

    Undoing an undo brings the run it undid back, so that run is no longer undone; if that run
    was itself an undo (a redo undone), what it undid is undone again, and so on down the chain.
    """
    while changed.undoes:
        target = Checkpoint.load(root, changed.undoes)
        if changed.undone_by is None and target.undone_by is None:
            target.undone_by = changed.run_id
        elif changed.undone_by is not None and target.undone_by == changed.run_id:
            target.undone_by = None
        else:
            return  # undone or brought back since by another undo: its state is its own
        target.save()
        changed = target


def restore_on_disk(workspace: Workspace, items: Iterable[FileUndo]) -> None:
    """Put each file back as it was before the run (atomic writes); a file it made is removed."""
    for item in items:
        real = workspace.resolve(item.path, for_write=True)
        if item.before is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(real)
        else:
            atomic_write_bytes(real, item.before)


def apply_undo(workspace: Workspace, plan: UndoPlan) -> Checkpoint:
    """Carry the plan out on disk (atomic writes); returns the undo's own checkpoint."""
    record = begin_undo(workspace, plan)
    restore_on_disk(workspace, plan.changes)
    finish_undo(workspace, plan, record)
    return record
