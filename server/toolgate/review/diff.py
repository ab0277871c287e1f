"""Unified diffs and their hunks, computed with difflib and read back with unidiff."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from unidiff import PatchSet

_NO_EOL = "\\ No newline at end of file\n"


@dataclass(frozen=True)
class Hunk:
    """One reviewable change: original lines [start, end) become `new_lines`."""

    index: int
    start: int  # 0-based line in the original text
    end: int  # exclusive
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]
    header: str

    @property
    def old_text(self) -> str:
        """The replaced lines as text."""
        return "".join(self.old_lines)

    @property
    def new_text(self) -> str:
        """The replacement lines as text."""
        return "".join(self.new_lines)


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept, so joining them gives the text back."""
    return text.splitlines(keepends=True)


def _diff_lines(lines: list[str]) -> list[str]:
    # unified diff wants every line terminated; mark a missing final newline the way git does.
    out = list(lines)
    if out and not out[-1].endswith("\n"):
        out[-1] = out[-1] + "\n" + _NO_EOL
    return out


def unified_diff(old: str, new: str, path: str, *, context: int = 3, new_file: bool = False) -> str:
    """A git-style unified diff of one file."""
    old_label = "/dev/null" if new_file else f"a/{path}"
    lines = difflib.unified_diff(
        _diff_lines(split_lines(old)),
        _diff_lines(split_lines(new)),
        fromfile=old_label,
        tofile=f"b/{path}",
        n=context,
    )
    return "".join(lines)


def hunks_of(old: str, new: str, diff: str) -> list[Hunk]:
    """The hunks of a diff, each narrowed to the lines it really changes."""
    if not diff:
        return []
    old_lines = split_lines(old)
    new_lines = split_lines(new)
    hunks: list[Hunk] = []
    for patched_file in PatchSet(diff):
        for hunk in patched_file:
            # Both sides of a hunk share its context, so the change spans from the first to
            # the last changed line, counted on each side from the hunk's start.
            src_first = hunk.source_start - 1 if hunk.source_length else hunk.source_start
            tgt_first = hunk.target_start - 1 if hunk.target_length else hunk.target_start
            lead = 0
            for line in hunk:
                if line.is_context:
                    lead += 1
                else:
                    break
            trail = 0
            for line in reversed(list(hunk)):
                if line.is_context:
                    trail += 1
                else:
                    break
            start = src_first + lead
            end = src_first + hunk.source_length - trail
            t_start = tgt_first + lead
            t_end = tgt_first + hunk.target_length - trail
            hunks.append(
                Hunk(
                    index=len(hunks),
                    start=start,
                    end=max(start, end),
                    old_lines=tuple(old_lines[start:end]),
                    new_lines=tuple(new_lines[t_start:t_end]),
                    header=str(hunk).splitlines()[0],
                )
            )
    return hunks


def apply_hunks(old: str, hunks: list[Hunk], selected: set[int] | None = None) -> str:
    """The original text with the selected hunks (all when None) applied."""
    lines = split_lines(old)
    for hunk in sorted(hunks, key=lambda h: h.start, reverse=True):
        if selected is not None and hunk.index not in selected:
            continue
        lines[hunk.start : hunk.end] = list(hunk.new_lines)
    return "".join(lines)


def locate(lines: list[str], block: tuple[str, ...], near: int) -> int | None:
    """Where `block` stands in `lines`, choosing the occurrence nearest `near`; None if absent."""
    if not block:
        return near if 0 <= near <= len(lines) else None
    width = len(block)
    first = block[0]
    best: int | None = None
    for i in range(0, len(lines) - width + 1):
        if lines[i] == first and tuple(lines[i : i + width]) == block:
            if best is None or abs(i - near) < abs(best - near):
                best = i
    return best
