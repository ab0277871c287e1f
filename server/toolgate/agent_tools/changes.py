"""What a run changed, read from its checkpoint against the disk: a diff and the files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgate.agent.checkpoints import Checkpoint, CheckpointError
from toolgate.review.diff import unified_diff
from toolgate.workspace.files import BinaryFileError, decode_text


@dataclass
class FileChange:
    """One file as the run left it, compared with how it was before the run."""

    path: str
    status: str  # "added", "modified" or "deleted"
    added: int
    removed: int
    diff: str

    def to_dict(self) -> dict[str, Any]:
        """The entry a result's `files_changed` holds."""
        return {
            "path": self.path,
            "status": self.status,
            "lines_added": self.added,
            "lines_removed": self.removed,
        }


def _text(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return decode_text(raw).text
    except BinaryFileError:
        return "(binary file)\n"


def _counts(diff: str) -> tuple[int, int]:
    lines = diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return added, removed


def run_changes(root: Path, run_id: str) -> list[FileChange]:
    """Each file the run changed and that differs now from before it (none: no checkpoint)."""
    try:
        checkpoint = Checkpoint.load(root, run_id)
    except CheckpointError:
        return []
    found: list[FileChange] = []
    for record in sorted(checkpoint.files.values(), key=lambda r: r.path):
        before = _text(checkpoint.before_bytes(record))
        real = root / record.path
        now = _text(real.read_bytes()) if real.is_file() else None
        if before == now:
            continue
        diff = unified_diff(before or "", now or "", record.path, new_file=before is None)
        if now is None:
            diff = diff.replace(f"+++ b/{record.path}\n", "+++ /dev/null\n", 1)
        status = "added" if before is None else "deleted" if now is None else "modified"
        found.append(FileChange(record.path, status, *_counts(diff), diff))
    return found


def combined_diff(changes: list[FileChange]) -> str:
    """One unified diff of every change, file by file."""
    return "".join(change.diff for change in changes)
