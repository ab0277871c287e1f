"""Which lines of two texts match: equal runs walked in step, resynchronised on unique lines.

Plain difflib spends most of its time looking for the longest match across a whole large
file; a handful of edits in a 10,000-line file would cost tens of milliseconds. Here equal
lines are walked in step; at a difference, the next line that occurs once on each side (and
lies ahead on both) is where the two sides meet again, and only the small gap before it goes
through difflib.

Two walks give the same blocks. `match_lists` works on line lists. `match_texts` works on
the texts themselves, for texts whose only line break is LF: equal runs are compared and
uniqueness is searched for at C speed, so the lines of the large equal regions never become
Python objects. It hands over to the list walk when its searches grow too long.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Callable
from typing import Protocol

# Other characters str.splitlines breaks at; a text holding any of them takes the list walk.
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
_WIDE_BREAKS = ("\x85", "\u2028", "\u2029")

Block = tuple[int, int, int]  # a[i:i+k] == b[j:j+k]

# What trying one line as a meeting point costs besides its searches, in searched chars: many
# repeated lines after a change are cheap to search but slow to try one by one.
_CANDIDATE_CHARS = 8192


class Lines(Protocol):
    """One side of a diff, as the rendering of hunks needs it."""

    count: int  # number of lines
    unterminated: bool  # the last line has no "\n"

    def lines(self, start: int, stop: int) -> list[str]:
        """Lines [start, stop), with their endings."""
        ...


class ListLines:
    """A side held as a list of lines."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        self.count = len(lines)
        self.unterminated = bool(lines) and not lines[-1].endswith("\n")

    def lines(self, start: int, stop: int) -> list[str]:
        """Lines [start, stop)."""
        return self._lines[start:stop]


class TextLines:
    """A side held as its text, with line starts known at the points the walk passed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.count = 0
        self.unterminated = bool(text) and not text.endswith("\n")
        self._numbers = [0]
        self._offsets = [0]

    def note(self, line: int, offset: int) -> None:
        """Line `line` starts at `offset` (lines are noted in increasing order)."""
        if line > self._numbers[-1]:
            self._numbers.append(line)
            self._offsets.append(offset)

    def offset(self, line: int) -> int:
        """Where line `line` starts, stepping from the nearest noted line."""
        k = bisect.bisect_right(self._numbers, line) - 1
        if k + 1 < len(self._numbers) and self._numbers[k + 1] - line < line - self._numbers[k]:
            return self._back(self._offsets[k + 1], self._numbers[k + 1] - line)
        return self._forward(self._offsets[k], line - self._numbers[k])

    def _forward(self, offset: int, steps: int) -> int:
        text = self.text
        for _ in range(steps):
            end = text.find("\n", offset)
            offset = len(text) if end < 0 else end + 1
        return offset

    def _back(self, offset: int, steps: int) -> int:
        text = self.text
        for _ in range(steps):
            # offset - 1 is the "\n" that ends the previous line, unless offset is past an
            # unterminated last line (then offset == len(text) and it is that line's last char).
            end = offset - 1 if offset < len(text) or not self.unterminated else offset
            offset = text.rfind("\n", 0, end) + 1
        return offset

    def lines(self, start: int, stop: int) -> list[str]:
        """Lines [start, stop)."""
        if start >= stop:
            return []
        return self.text[self.offset(start) : self.offset(stop)].splitlines(keepends=True)


def breaks_only_at_newline(text: str) -> bool:
    """Whether str.splitlines breaks `text` at LF alone, so that its lines can be searched for."""
    if any(ch in text for ch in _OTHER_BREAKS):
        return False
    return text.isascii() or not any(ch in text for ch in _WIDE_BREAKS)


class _Blocks:
    """Matching blocks as the walks find them, adjacent ones merged."""

    def __init__(self) -> None:
        self.items: list[list[int]] = []

    def add(self, i: int, j: int, k: int) -> None:
        items = self.items
        last = items[-1] if items else None
        if last is not None and last[0] + last[2] == i and last[1] + last[2] == j:
            last[2] += k
        elif k:
            items.append([i, j, k])

    def gap(self, a: list[str], b: list[str], i: int, j: int) -> None:
        """Match a small gap with plain difflib."""
        if a and b:
            sub = difflib.SequenceMatcher(None, a, b, autojunk=False)
            for x, y, k in sub.get_matching_blocks():
                self.add(i + x, j + y, k)

    def result(self, la: int, lb: int) -> list[Block]:
        """The blocks, ending with difflib's (la, lb, 0) sentinel."""
        out: list[Block] = [(i, j, k) for i, j, k in self.items]
        out.append((la, lb, 0))
        return out


def match_lists(a: list[str], b: list[str]) -> list[Block]:
    """Matching blocks of two line lists (difflib's form, sentinel included)."""
    la, lb = len(a), len(b)
    count_a = Counter(a)
    count_b = Counter(b)
    blocks = _Blocks()
    i = j = 0
    while i < la and j < lb:
        if a[i] == b[j]:
            run = _equal_run(a, b, i, j)
            blocks.add(i, j, run)
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
        blocks.gap(a[i:i2], b[j:j2], i, j)
        i, j = i2, j2
    blocks.gap(a[i:], b[j:], i, j)
    return blocks.result(la, lb)


def _equal_run(a: list[str], b: list[str], i: int, j: int) -> int:
    """How many lines from a[i] and b[j] on are equal (list slices compare at C speed)."""
    limit = min(len(a) - i, len(b) - j)
    good = 0
    step = 1
    while good + step <= limit and a[i + good : i + good + step] == b[j + good : j + good + step]:
        good += step
        step *= 2
    while step > 1:
        step //= 2
        if good + step <= limit and a[i + good : i + good + step] == b[j + good : j + good + step]:
            good += step
    return good


def _common_chars(a: str, i: int, b: str, j: int) -> int:
    """How many chars from a[i] and b[j] on are equal: galloping, then halving."""
    limit = min(len(a) - i, len(b) - j)
    good = 0
    step = 64
    # startswith compares in place: only b's piece is copied.
    while good + step <= limit and a.startswith(b[j + good : j + good + step], i + good):
        good += step
        step *= 2
    while step > 1:
        step //= 2
        if good + step <= limit and a.startswith(b[j + good : j + good + step], i + good):
            good += step
    return good


def _find(b: list[str], line: str, start: int) -> int:
    """The index of `line` in b at or after `start`, or -1."""
    try:
        return b.index(line, start)
    except ValueError:
        return -1


class SearchTooLong(Exception):
    """The text walk's uniqueness searches passed their budget; the list walk is cheaper."""


class _Meeting:
    """Finds where the two texts meet again: a line of a that occurs once in each text.

    A line occurs in a text where it stands at the start or right after an LF. Only lines
    of b in gaps can be the line in b before the current point: every other line there is
    equal to a line of a before the current point, and the line occurs in a only further on.
    For the same reason a line found once in a occurs in b after its first place there only
    if a later gap of b holds it; unless `exact`, that is left to be checked once the walk
    has found all gaps (`all_unique_in_b`) instead of searching the rest of b for each line.
    """

    def __init__(self, a: str, b: str, budget: int, exact: bool) -> None:
        self.a = a
        self.b = b
        self.exact = exact
        self.b_gap_lines: set[str] = set()
        self.unchecked: list[str] = []  # meeting lines whose uniqueness in b is assumed
        self._budget = budget

    def _spend(self, chars: int) -> None:
        self._budget -= chars
        if self._budget < 0:
            raise SearchTooLong

    def all_unique_in_b(self) -> bool:
        """Whether every meeting line whose search was left out does occur once in b."""
        return not any(line in self.b_gap_lines for line in self.unchecked)

    def where(self, start: int, end: int, pb: int) -> int:
        """The offset in b of a[start:end] when it is a line once in each text, at or after pb."""
        self._spend(_CANDIDATE_CHARS)
        line = self.a[start:end]
        if not line.endswith("\n"):
            return self._last_line(line, pb)
        if line in self.b_gap_lines:
            return -1
        # Cheapest test first: a line just replaced is missing from b, and the line where the
        # sides meet again is found in b close to pb.
        needle = "\n" + line
        at = self._first_in_b(line, needle, pb)
        if at < 0 or not self._once_in_a(line, needle, start):
            return -1
        if not self.exact:
            self.unchecked.append(line)
            return at
        self._spend(len(self.b) - at)
        return at if self.b.find(needle, at) < 0 else -1

    def _first_in_b(self, line: str, needle: str, pb: int) -> int:
        b = self.b
        if pb == 0 and b.startswith(line):
            return 0
        found = b.find(needle, max(pb - 1, 0))
        self._spend((found + len(needle) if found >= 0 else len(b)) - pb)
        return found + 1 if found >= 0 else -1

    def _once_in_a(self, line: str, needle: str, start: int) -> bool:
        a = self.a
        if start == 0:
            self._spend(len(a))
            return a.find(needle) < 0
        if a.startswith(line):
            return False
        first = a.find(needle)
        self._spend(first + len(needle) if first >= 0 else len(a))
        if first != start - 1:
            return False
        self._spend(len(a) - start)
        return a.find(needle, start) < 0

    def _last_line(self, line: str, pb: int) -> int:
        # An unterminated last line is unlike every other line of its text; it occurs in b
        # only as b's own unterminated last line.
        b = self.b
        at = len(b) - len(line)
        if at >= pb and b.endswith(line) and (at == 0 or b[at - 1] == "\n"):
            return at
        return -1


def match_texts(
    old: str, new: str, budget_factor: int = 16, exact: bool = False
) -> tuple[TextLines, TextLines, list[Block]]:
    """Matching blocks of two texts whose only line break is LF; the same as `match_lists`.

    Also gives both sides with the line starts the walk passed. Raises SearchTooLong when
    searching for unique lines would cost more than `budget_factor` passes over both texts.
    """
    a, b = TextLines(old), TextLines(new)
    budget = budget_factor * (len(old) + len(new) + _CANDIDATE_CHARS)
    meeting = _Meeting(old, new, budget, exact)
    blocks = _walk(a, b, meeting)
    if not meeting.all_unique_in_b():
        # A meeting line recurs in a later gap of b: the walk should have passed it by.
        return match_texts(old, new, budget_factor, exact=True)
    return a, b, blocks


def _walk(a: TextLines, b: TextLines, meeting: _Meeting) -> list[Block]:
    ta, tb = a.text, b.text
    na, nb = len(ta), len(tb)
    blocks = _Blocks()
    i = j = pa = pb = 0

    def gap(qa: int, qb: int) -> tuple[int, int]:
        ga = ta[pa:qa].splitlines(keepends=True)
        gb = tb[pb:qb].splitlines(keepends=True)
        meeting.b_gap_lines.update(gb)
        blocks.gap(ga, gb, i, j)
        return len(ga), len(gb)

    while pa < na and pb < nb:
        run, length = _equal_lines(ta, pa, tb, pb)
        if run:
            blocks.add(i, j, run)
            i, j, pa, pb = i + run, j + run, pa + length, pb + length
            a.note(i, pa)
            b.note(j, pb)
            continue
        qa, qb = _next_meeting(ta, pa, pb, meeting.where)
        if qb < 0:
            break
        da, db = gap(qa, qb)
        i, j, pa, pb = i + da, j + db, qa, qb
        a.note(i, pa)
        b.note(j, pb)
    da, db = gap(na, nb)
    a.count, b.count = i + da, j + db
    a.note(a.count, na)
    b.note(b.count, nb)
    return blocks.result(a.count, b.count)


def _equal_lines(ta: str, pa: int, tb: str, pb: int) -> tuple[int, int]:
    """How many whole lines from offsets pa and pb on are equal, and how many chars they span."""
    common = _common_chars(ta, pa, tb, pb)
    if pa + common == len(ta) and pb + common == len(tb):
        # The rest is the same on both sides, an unterminated last line included.
        return ta.count("\n", pa) + (not ta.endswith("\n")), common
    end = ta.rfind("\n", pa, pa + common) + 1
    if end == 0:
        return 0, 0
    return ta.count("\n", pa, end), end - pa


def _next_meeting(
    ta: str, pa: int, pb: int, where: Callable[[int, int, int], int]
) -> tuple[int, int]:
    """The offsets in a and b of the next line of a that occurs once in each text, or (_, -1)."""
    start = pa
    while start < len(ta):
        end = ta.find("\n", start) + 1 or len(ta)
        at = where(start, end, pb)
        if at >= 0:
            return start, at
        start = end
    return start, -1
