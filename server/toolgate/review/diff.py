"""Unified diffs and their hunks, both read off one matching of the two texts' lines."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from toolgate.review.matching import (
    Block,
    Lines,
    ListLines,
    SearchTooLong,
    breaks_only_at_newline,
    match_lists,
    match_texts,
)

_NO_EOL = "\\ No newline at end of file\n"

Opcode = tuple[str, int, int, int, int]


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

    def unified(self) -> str:
        """The hunk on its own, as a unified diff shows it: its header, then `-` and `+` lines."""
        lines = [self.header]
        lines += ["-" + line.rstrip("\n") for line in self.old_lines]
        lines += ["+" + line.rstrip("\n") for line in self.new_lines]
        return "\n".join(lines)


@dataclass(frozen=True)
class FileDiff:
    """A git-style unified diff of one file ("" when nothing changed) and its hunks."""

    text: str
    hunks: list[Hunk]


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept, so joining them gives the text back."""
    return text.splitlines(keepends=True)


def diff_texts(
    old: str, new: str, path: str, *, context: int = 3, new_file: bool = False
) -> FileDiff:
    """The unified diff of one file and its hunks, each narrowed to the lines it changes."""
    old_side, new_side, blocks = _match(old, new)
    groups = list(_grouped_opcodes(_opcodes(blocks), context))
    if not groups:
        return FileDiff("", [])
    out = [f"--- {'/dev/null' if new_file else 'a/' + path}\n", f"+++ b/{path}\n"]
    hunks: list[Hunk] = []
    for group in groups:
        hunks.append(_render(group, old_side, new_side, out, len(hunks)))
    return FileDiff("".join(out), hunks)


def unified_diff(old: str, new: str, path: str, *, context: int = 3, new_file: bool = False) -> str:
    """A git-style unified diff of one file."""
    return diff_texts(old, new, path, context=context, new_file=new_file).text


def _match(old: str, new: str) -> tuple[Lines, Lines, list[Block]]:
    # Searching the texts is cheaper than making every line an object, but only works when
    # "\n" is the sole line break; the list walk takes the rest, and pathological repeats.
    if breaks_only_at_newline(old) and breaks_only_at_newline(new):
        try:
            return match_texts(old, new)
        except SearchTooLong:
            pass
    a, b = ListLines(split_lines(old)), ListLines(split_lines(new))
    # Matched with the missing-newline marker on: with other line breaks, a line may lack a
    # "\n" without being the last, and must not then equal an unterminated last line.
    marked_a = _marked(a.lines(0, a.count), a.unterminated)
    marked_b = _marked(b.lines(0, b.count), b.unterminated)
    return a, b, match_lists(marked_a, marked_b)


def _opcodes(blocks: list[Block]) -> list[Opcode]:
    """difflib.SequenceMatcher.get_opcodes, from matching blocks."""
    i = j = 0
    answer: list[Opcode] = []
    for ai, bj, size in blocks:
        tag = ""
        if i < ai and j < bj:
            tag = "replace"
        elif i < ai:
            tag = "delete"
        elif j < bj:
            tag = "insert"
        if tag:
            answer.append((tag, i, ai, j, bj))
        i, j = ai + size, bj + size
        if size:
            answer.append(("equal", ai, i, bj, j))
    return answer


def _grouped_opcodes(codes: list[Opcode], n: int) -> Iterator[list[Opcode]]:
    """difflib.SequenceMatcher.get_grouped_opcodes, from opcodes."""
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    nn = n + n
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        # A long equal run ends the group, keeping n lines of context on each side of it.
        if tag == "equal" and i2 - i1 > nn:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _render(group: list[Opcode], old: Lines, new: Lines, out: list[str], index: int) -> Hunk:
    """Write one group's hunk into `out` and return it as a Hunk."""
    first, last = group[0], group[-1]
    a1, a2, b1, b2 = first[1], last[2], first[3], last[4]
    a_raw, b_raw = old.lines(a1, a2), new.lines(b1, b2)
    a_seg = _marked(a_raw, a2 == old.count and old.unterminated)
    b_seg = _marked(b_raw, b2 == new.count and new.unterminated)
    out.append(f"@@ -{_span(a1, a2)} +{_span(b1, b2)} @@\n")
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            out.extend(" " + line for line in a_seg[i1 - a1 : i2 - a1])
            continue
        if tag in ("replace", "delete"):
            out.extend("-" + line for line in a_seg[i1 - a1 : i2 - a1])
        if tag in ("replace", "insert"):
            out.extend("+" + line for line in b_seg[j1 - b1 : j2 - b1])
    lead = first[2] - first[1] if first[0] == "equal" else 0
    # A hunk whose last context line is the unterminated end of the file ends with the
    # missing-newline marker, which is not context: such a hunk keeps its trailing context
    # (as reading the diff back with unidiff did), so it reaches the file's end.
    ends_at_marker = a2 == old.count and old.unterminated
    trail = last[2] - last[1] if last[0] == "equal" and not ends_at_marker else 0
    start, end = a1 + lead, a2 - trail
    return Hunk(
        index=index,
        start=start,
        end=max(start, end),
        old_lines=tuple(a_raw[lead : end - a1]),
        new_lines=tuple(b_raw[lead : b2 - trail - b1]),
        header=_header(a1, a2, b1, b2),
    )


def _marked(lines: list[str], unterminated_end: bool) -> list[str]:
    # unified diff wants every line terminated; mark a missing final newline the way git does.
    if not unterminated_end or not lines:
        return lines
    return [*lines[:-1], lines[-1] + "\n" + _NO_EOL]


def _span(start: int, stop: int) -> str:
    """A hunk header's range, as difflib and git write it."""
    length = stop - start
    begin = start + 1
    if length == 1:
        return f"{begin}"
    if not length:
        begin -= 1  # an empty range names the line before it
    return f"{begin},{length}"


def _header(a1: int, a2: int, b1: int, b2: int) -> str:
    """A hunk's header with both lengths always written (unidiff's form, which Hunk keeps)."""
    a_start = a1 + 1 if a2 > a1 else a1
    b_start = b1 + 1 if b2 > b1 else b1
    return f"@@ -{a_start},{a2 - a1} +{b_start},{b2 - b1} @@"


def hunk_line_counts(diff: str) -> list[tuple[int, int]]:
    """Lines added and removed per hunk of a unified diff, in order."""
    hunks: list[tuple[int, int]] = []
    for line in diff.splitlines():
        if line.startswith("@@"):
            hunks.append((0, 0))
        elif hunks and line.startswith("+") and not line.startswith("+++"):
            hunks[-1] = (hunks[-1][0] + 1, hunks[-1][1])
        elif hunks and line.startswith("-") and not line.startswith("---"):
            hunks[-1] = (hunks[-1][0], hunks[-1][1] + 1)
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
