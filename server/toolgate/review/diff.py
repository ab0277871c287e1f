"""Unified diffs and their hunks, computed with difflib and read back with unidiff."""

from __future__ import annotations

import difflib
from collections import Counter
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


class AnchoredMatcher(difflib.SequenceMatcher):
    """difflib's matcher, with equal runs walked in step and resynchronised on unique lines.

    Plain difflib spends most of its time looking for the longest match across a whole large
    file; a handful of edits in a 10,000-line file would cost tens of milliseconds. Here equal
    lines are walked in step; at a difference, the next line that occurs once on each side
    (and lies ahead on both) is where the two sides meet again, and only the small gap before
    it goes through difflib.
    """

    def _SequenceMatcher__chain_b(self) -> None:  # noqa: N802 - difflib's private hook
        # difflib indexes all of b up front for find_longest_match, which this matcher never
        # calls on the whole file; the gaps get their own plain matchers.
        self.b2j: dict[str, list[int]] = {}
        self.bjunk: set[str] = set()
        self.bpopular: set[str] = set()

    def get_matching_blocks(self) -> list[difflib.Match]:  # type: ignore[override]
        """Matching blocks: equal runs in step, difflib only in the gaps between them."""
        if self.matching_blocks is not None:
            return self.matching_blocks  # type: ignore[return-value]
        a, b = self.a, self.b
        la, lb = len(a), len(b)
        count_a = Counter(a)
        count_b = Counter(b)
        blocks: list[list[int]] = []

        def add(i: int, j: int, k: int) -> None:
            last = blocks[-1] if blocks else None
            if last is not None and last[0] + last[2] == i and last[1] + last[2] == j:
                last[2] += k
            elif k:
                blocks.append([i, j, k])

        def gap(i1: int, i2: int, j1: int, j2: int) -> None:
            if i1 < i2 and j1 < j2:
                sub = difflib.SequenceMatcher(None, a[i1:i2], b[j1:j2], autojunk=False)
                for i, j, k in sub.get_matching_blocks():
                    add(i1 + i, j1 + j, k)

        i = j = 0
        while i < la and j < lb:
            if a[i] == b[j]:
                run = _equal_run(a, b, i, j)
                add(i, j, run)
                i, j = i + run, j + run
                continue
            i2, j2 = i, -1
            while i2 < la:
                line = a[i2]
                if count_a[line] == 1 and count_b[line] == 1:
                    j2 = _find(b, line, j)
                    if j2 >= 0:
                        break
                i2 += 1
            if i2 >= la:
                break
            gap(i, i2, j, j2)
            i, j = i2, j2
        gap(i, la, j, lb)
        result = [difflib.Match(bi, bj, k) for bi, bj, k in blocks]
        result.append(difflib.Match(la, lb, 0))
        self.matching_blocks = result  # type: ignore[assignment]
        return result


def _equal_run(a: list[str], b: list[str], i: int, j: int) -> int:
    """How many lines from a[i] and b[j] on are equal (list slices compare at C speed)."""
    limit = min(len(a) - i, len(b) - j)
    step = 1
    good = 0
    while good + step <= limit and a[i + good : i + good + step] == b[j + good : j + good + step]:
        good += step
        step *= 2
    while step > 1:
        step //= 2
        if good + step <= limit and a[i + good : i + good + step] == b[j + good : j + good + step]:
            good += step
    return good


def _find(b: list[str], line: str, start: int) -> int:
    """The index of `line` in b at or after `start`, or -1."""
    try:
        return b.index(line, start)
    except ValueError:
        return -1


def unified_diff(old: str, new: str, path: str, *, context: int = 3, new_file: bool = False) -> str:
    """A git-style unified diff of one file."""
    a = _diff_lines(split_lines(old))
    b = _diff_lines(split_lines(new))
    out = [f"--- {'/dev/null' if new_file else 'a/' + path}\n", f"+++ b/{path}\n"]
    matcher = AnchoredMatcher(None, a, b, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(context))
    if not groups:
        return ""
    for group in groups:
        first, last = group[0], group[-1]
        out.append(f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                out.extend("-" + line for line in a[i1:i2])
            if tag in ("replace", "insert"):
                out.extend("+" + line for line in b[j1:j2])
    return "".join(out)


def _span(start: int, stop: int) -> str:
    """A hunk header's range, as difflib and git write it."""
    length = stop - start
    begin = start + 1
    if length == 1:
        return f"{begin}"
    if not length:
        begin -= 1  # an empty range names the line before it
    return f"{begin},{length}"


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
