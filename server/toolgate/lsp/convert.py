"""Engine records ↔ lsprotocol: the one module that knows both sides."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

if TYPE_CHECKING:
    from toolgate.review.proposal import Proposal


def path_to_uri(path: Path) -> str:
    """A file URI for an absolute path."""
    uri: str | None = from_fs_path(str(path))
    assert uri is not None
    return uri


def uri_to_path(uri: str) -> Path | None:
    """The absolute path of a file URI (None for other schemes)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def line_range(start: int, end: int) -> types.Range:
    """Whole lines [start, end) as an LSP range."""
    return types.Range(
        start=types.Position(line=start, character=0), end=types.Position(line=end, character=0)
    )


def _end_position(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=len(lines[-1]))


def hunk_edits(proposal: Proposal, selected: set[int] | None, current: str) -> list[types.TextEdit]:
    """Minimal edits, one per selected hunk, against `current` (== the proposal's original)."""
    lines = current.splitlines(keepends=True)
    edits = []
    for hunk in proposal.hunks:
        if selected is not None and hunk.index not in selected:
            continue
        # A hunk ending at the last line of a file with no final newline ends mid-line.
        if hunk.end >= len(lines) and lines and not lines[-1].endswith("\n"):
            start = (
                types.Position(line=hunk.start, character=0)
                if hunk.start < len(lines)
                else _end_position(current)
            )
            rng = types.Range(start=start, end=_end_position(current))
        else:
            rng = line_range(hunk.start, hunk.end)
        edits.append(types.TextEdit(range=rng, new_text=hunk.new_text))
    return edits


def proposal_payload(proposal: Proposal, uri: str, version: int | None) -> dict[str, Any]:
    """The `toolgate/proposal` notification's parameters."""
    return {
        "id": proposal.id,
        "runId": proposal.run_id,
        "tool": proposal.tool,
        "uri": uri,
        "path": proposal.path,
        "diff": proposal.diff,
        "hunks": [
            {
                "index": h.index,
                "range": {
                    "start": {"line": h.start, "character": 0},
                    "end": {"line": h.end, "character": 0},
                },
                "oldText": h.old_text,
                "newText": h.new_text,
                "header": h.header,
            }
            for h in proposal.hunks
        ],
        "why": proposal.why,
        "status": proposal.status.value,
        "isNewFile": proposal.is_new_file,
        "proposedText": proposal.proposed,
        "version": version,
    }


def failure_diagnostic(failure: Any, root: Path, severity: int) -> types.Diagnostic:
    """A test failure as a diagnostic on its failing line, traceback frames related."""
    line = max(0, int(failure.line) - 1)
    related = []
    for frame in failure.frames:
        frame_path = Path(frame.file)
        if not frame_path.is_absolute():
            frame_path = root / frame_path
        if frame.file == failure.file and frame.line == failure.line:
            continue
        related.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=path_to_uri(frame_path),
                    range=line_range(max(0, frame.line - 1), max(0, frame.line)),
                ),
                message=f"in {frame.name}" if frame.name else "traceback frame",
            )
        )
    message = f"{failure.test_id}: {failure.message}" if failure.message else failure.test_id
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=line, character=0),
            end=types.Position(line=line + 1, character=0),
        ),
        severity=types.DiagnosticSeverity(severity),
        source="toolgate",
        code=failure.test_id,
        message=message,
        related_information=related or None,
        data={"testId": failure.test_id, "kind": getattr(failure, "kind", "failed")},
    )
