"""Checkpoints: what each run changed, kept so that the run can be undone exactly.

Before a run first changes a file, the file's bytes on disk (or the fact that it did not exist)
go into the run's own store, `.toolgate/runs/<run_id>.checkpoint/`; after each change lands,
the text the change left is remembered by its hash, so an undo can tell a file the run left
from one somebody changed since. Only the files the run touched are kept: no second
repository, no copies of anything else. Commits the run made are listed, never rewritten.

Files an allowed command changes (a formatter run through `run_command`, a test that writes a
fixture) are kept too: before the command runs, the workspace's text files (tracked, and
untracked but not ignored) are held in memory (`snapshot_workspace`), and afterwards each file
the command changed, created or removed is recorded like a change of the run's own
(`record_command_changes`). The snapshot is bounded; a larger workspace, a binary file or one
over the size limit is not held, so what a command does to it cannot be undone.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.agent.git_output import git_output
from toolgate.workspace import PathRefused, Workspace
from toolgate.workspace.files import (
    BinaryFileError,
    atomic_write_bytes,
    atomic_write_text,
    decode_text,
    toolgate_dir,
)

FORMAT = "toolgate-checkpoint"
VERSION = 1
SUFFIX = ".checkpoint"

# What is held in memory before an allowed command runs, at the most: past either bound the
# workspace is not snapshotted and the command's changes are not recorded (the log says so).
SNAPSHOT_MAX_FILES = 5_000
SNAPSHOT_MAX_BYTES = 32 * 1024 * 1024

# Folders never snapshotted where git cannot say what is ignored (no repository).
_UNLISTED_FOLDERS = frozenset(
    {".git", ".toolgate", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache"}
)

log = logging.getLogger("toolgate.checkpoints")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used (missing, damaged, of a newer format)."""


def text_digest(text: str | None) -> str | None:
    """The hash a file's text is compared by (newlines normalised, as the workspace reads)."""
    if text is None:
        return None
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8", "surrogatepass")).hexdigest()


def store_dir(root: Path) -> Path:
    """The folder that holds every run's checkpoint (inside the ignored run records)."""
    return toolgate_dir(root) / "runs"


@dataclass
class FileRecord:
    """One file a run changed: what it was before, and what the run left."""

    path: str  # workspace-relative POSIX path
    existed: bool  # False: the run created it
    blob: str | None  # the before bytes' sha256 (the blob's name), None when it did not exist
    after: str | None = None  # text_digest of what the run left (None: it removed the file)
    landed: bool = False  # False: the change was never applied (or the process died first)

    def to_dict(self) -> dict[str, Any]:
        """The record as the store keeps it."""
        return {
            "path": self.path,
            "existed": self.existed,
            "blob": self.blob,
            "after": self.after,
            "landed": self.landed,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileRecord:
        """Read a record back (CheckpointError when it is damaged)."""
        try:
            return cls(
                path=str(data["path"]),
                existed=bool(data["existed"]),
                blob=None if data["blob"] is None else str(data["blob"]),
                after=None if data.get("after") is None else str(data["after"]),
                landed=bool(data.get("landed", False)),
            )
        except (KeyError, TypeError) as exc:
            raise CheckpointError(f"a damaged file record: {exc}") from None


@dataclass
class Checkpoint:
    """The store of one run: its manifest (`checkpoint.json`) and the before-blobs."""

    root: Path
    run_id: str
    created: float = field(default_factory=time.time)
    files: dict[str, FileRecord] = field(default_factory=dict)
    commits: list[str] = field(default_factory=list)
    undoes: str | None = None  # the run this checkpoint's run undid
    undone_by: str | None = None

    @property
    def folder(self) -> Path:
        """Where this run's store lives."""
        return store_dir(self.root) / f"{self.run_id}{SUFFIX}"

    @property
    def manifest(self) -> Path:
        """The store's manifest file."""
        return self.folder / "checkpoint.json"

    @property
    def landed(self) -> list[str]:
        """The files the run really changed (a change never applied does not count)."""
        return [record.path for record in self.files.values() if record.landed]

    def before_change(self, path: str, raw: bytes | None) -> None:
        """Keep a file's state before the run first changes it (`raw` None: it does not exist)."""
        if path in self.files:
            return
        blob = None
        if raw is not None:
            blob = hashlib.sha256(raw).hexdigest()
            target = self.folder / "blobs" / blob
            if not target.exists():
                atomic_write_bytes(target, raw)
        self.files[path] = FileRecord(path, raw is not None, blob)
        # Written before the change is applied: a crash in between still leaves the way back.
        self.save()

    def after_change(self, path: str, text: str | None) -> None:
        """Remember what the run left in a file (`text` None: the run removed it)."""
        record = self.files.get(path)
        if record is None:
            return
        record.after = text_digest(text)
        record.landed = True
        self.save()

    def commit_made(self, sha: str) -> None:
        """A commit the run made (named by undo, never rewritten)."""
        if sha and sha not in self.commits:
            self.commits.append(sha)
            self.save()

    def before_bytes(self, record: FileRecord) -> bytes | None:
        """The bytes a file held before the run (None when it did not exist)."""
        if record.blob is None:
            return None
        try:
            raw = (self.folder / "blobs" / record.blob).read_bytes()
        except OSError as exc:
            raise CheckpointError(f"the saved copy of {record.path} is missing: {exc}") from None
        if hashlib.sha256(raw).hexdigest() != record.blob:
            raise CheckpointError(f"the saved copy of {record.path} is damaged")
        return raw

    def to_dict(self) -> dict[str, Any]:
        """The manifest's content."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "run_id": self.run_id,
            "created": self.created,
            "undoes": self.undoes,
            "undone_by": self.undone_by,
            "commits": self.commits,
            "files": [r.to_dict() for r in self.files.values()],
        }

    def save(self) -> None:
        """Write the manifest atomically."""
        atomic_write_text(self.manifest, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, root: Path, run_id: str) -> Checkpoint:
        """Read a run's checkpoint (CheckpointError when there is none or it is damaged)."""
        if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith("."):
            raise CheckpointError(f"{run_id!r} is not a run id")
        path = store_dir(root) / f"{run_id}{SUFFIX}" / "checkpoint.json"
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            raise CheckpointError(
                f"run {run_id} changed nothing: there is nothing to undo"
            ) from None
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"run {run_id}'s checkpoint cannot be read: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CheckpointError(f"{path} is not a Toolgate checkpoint")
        if not isinstance(data.get("version"), int) or data["version"] > VERSION:
            raise CheckpointError(f"{path} was written by a newer Toolgate")
        files = data.get("files")
        commits = data.get("commits", [])
        if not isinstance(files, list) or not isinstance(commits, list):
            raise CheckpointError(f"{path} is damaged")
        checkpoint = cls(
            root,
            str(data.get("run_id", run_id)),
            created=float(data.get("created") or 0.0),
            commits=[str(c) for c in commits],
            undoes=data.get("undoes"),
            undone_by=data.get("undone_by"),
        )
        for item in files:
            if not isinstance(item, dict):
                raise CheckpointError(f"{path} is damaged")
            record = FileRecord.from_dict(item)
            checkpoint.files[record.path] = record
        return checkpoint


def run_ids(root: Path) -> list[str]:
    """The runs with a checkpoint, oldest first."""
    folder = root / ".toolgate" / "runs"
    if not folder.is_dir():
        return []
    found: list[tuple[float, str]] = []
    for entry in folder.glob(f"*{SUFFIX}/checkpoint.json"):
        run_id = entry.parent.name[: -len(SUFFIX)]
        try:
            created = float(json.loads(entry.read_text("utf-8")).get("created") or 0.0)
        except (OSError, ValueError, AttributeError):
            continue
        found.append((created, run_id))
    return [run_id for _, run_id in sorted(found)]


def latest_run(root: Path) -> str | None:
    """The run whose checkpoint is newest, or None."""
    ids = run_ids(root)
    return ids[-1] if ids else None


@dataclass
class WorkspaceSnapshot:
    """The workspace's text files before a command: their bytes, by workspace-relative path."""

    files: dict[str, bytes] = field(default_factory=dict)
    passed_over: set[str] = field(default_factory=set)  # listed, but binary or too large


def _listed_files(root: Path) -> Iterator[str]:
    """The workspace's files: git's tracked and untracked-not-ignored ones, else a plain walk."""
    listed = git_output(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is not None:
        for name in listed.decode("utf-8", "surrogateescape").split("\0"):
            if name:
                yield name
        return
    for folder, folders, names in os.walk(root):
        folders[:] = [f for f in folders if f not in _UNLISTED_FOLDERS]
        relative = Path(folder).relative_to(root)
        for name in names:
            yield (relative / name).as_posix()


def _regular_bytes(workspace: Workspace, path: str) -> bytes | None:
    """A listed file's bytes when it is a regular file the workspace lets Toolgate write."""
    try:
        real = workspace.resolve(path, for_write=True)
        if not real.is_file() or real.is_symlink():
            return None
        if real.stat().st_size > workspace.max_file_bytes:
            raise OSError("over the size limit")
        return real.read_bytes()
    except (PathRefused, OSError):
        return None


def _is_text(raw: bytes) -> bool:
    try:
        decode_text(raw)
    except BinaryFileError:
        return False
    return True


def snapshot_workspace(workspace: Workspace) -> WorkspaceSnapshot | None:
    """Hold the workspace's text files before a command; None when it is over the bounds."""
    snapshot = WorkspaceSnapshot()
    total = 0
    for count, path in enumerate(_listed_files(workspace.root)):
        raw = _regular_bytes(workspace, path)
        if raw is None or not _is_text(raw):
            snapshot.passed_over.add(path)
            continue
        total += len(raw)
        if count >= SNAPSHOT_MAX_FILES or total > SNAPSHOT_MAX_BYTES:
            log.warning(
                "the workspace holds more than %d files or %d bytes: what commands change in "
                "it is not kept for undo",
                SNAPSHOT_MAX_FILES,
                SNAPSHOT_MAX_BYTES,
            )
            return None
        snapshot.files[path] = raw
    return snapshot


def record_command_changes(
    checkpoint: Checkpoint, workspace: Workspace, snapshot: WorkspaceSnapshot
) -> list[str]:
    """Record each file a command changed, created or removed since `snapshot`; their paths."""
    changed: list[str] = []
    after = set(_listed_files(workspace.root))
    for path in sorted(after | set(snapshot.files)):
        if path in snapshot.passed_over:
            continue
        before = snapshot.files.get(path)
        now = _regular_bytes(workspace, path)
        if now == before:
            continue
        if now is not None and not _is_text(now):
            continue  # what undo compares against must be text
        try:
            workspace.resolve(path, for_write=True)
        except PathRefused:
            continue
        try:
            checkpoint.before_change(path, before)
            checkpoint.after_change(path, None if now is None else decode_text(now).text)
        except OSError as exc:  # the run goes on; only this file's way back is missing
            log.warning("could not keep %s for undo: %s", path, exc)
            continue
        changed.append(path)
    return changed
