"""What the model is told, as a turn starts, of its earlier turns' changes undone or brought back.

An undo can come from any front end (the editor, `/undo` in a chat, `toolgate undo` in another
terminal) while the conversation's messages still show the model its changes. Left untold, the
model edits text that is no longer there, or builds on a change the person threw away. The disk
is the truth (each checkpoint knows whether its run is undone), so the news is read from it at
each turn's start and compared with what the model was last told.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolgate.agent.checkpoints import Checkpoint, CheckpointError


@dataclass
class UndoNews:
    """What a turn's start tells the model of undos, and what the person is shown of it."""

    note: str = ""  # opens the turn's user message
    notice: str = ""  # the same, in one line for the person
    undone: list[str] = field(default_factory=list)  # the runs the model now knows undone


def undo_news(root: Path, runs: list[tuple[int, str]], told: list[str]) -> UndoNews:
    """News of `runs` (turn, run id) undone or brought back since the model was `told`."""
    lines: list[str] = []
    shown: list[str] = []
    undone: list[str] = []
    for turn, run_id in runs:
        try:
            checkpoint = Checkpoint.load(root, run_id)
        except CheckpointError:
            continue  # the run changed nothing, or its checkpoint is gone: nothing to undo
        if checkpoint.undone_by:
            undone.append(run_id)
            if run_id not in told:
                files = _files(_undo_of(root, checkpoint) or checkpoint)
                lines.append(
                    f"- the person undid the changes of turn {turn} (run {run_id}); "
                    f"as they were before it: {files}"
                )
                shown.append(f"turn {turn}'s changes (run {run_id}) were undone")
        elif run_id in told:
            files = _files(checkpoint)
            lines.append(
                f"- the person brought back the changes of turn {turn} (run {run_id}), undone "
                f"before; as that turn left them: {files}"
            )
            shown.append(f"turn {turn}'s changes (run {run_id}) are back")
    if not lines:
        return UndoNews(undone=undone)
    note = (
        "[Since your last answer]\n"
        + "\n".join(lines)
        + "\nRead a file again before you change it: your earlier messages show it otherwise."
    )
    return UndoNews(note=note, notice="told the model: " + "; ".join(shown), undone=undone)


def _undo_of(root: Path, checkpoint: Checkpoint) -> Checkpoint | None:
    """The checkpoint of the undo that undid `checkpoint`'s run: it holds the files put back."""
    try:
        return Checkpoint.load(root, str(checkpoint.undone_by))
    except CheckpointError:
        return None


def _files(checkpoint: Checkpoint) -> str:
    landed = sorted(checkpoint.landed)
    if not landed:
        return "no file"
    shown = ", ".join(landed[:10])
    return shown + (f" and {len(landed) - 10} more" if len(landed) > 10 else "")
