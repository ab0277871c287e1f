"""The diff and hunks agree with the straightforward pipeline they replace.

The reference below is that pipeline as it was: difflib's matcher with equal runs walked in
step over line lists, the unified diff written from its grouped opcodes, and the hunks read
back from the diff text with unidiff. The text walk (used when "\\n" is the only line break)
and the list walk (used otherwise) must both give exactly its diff and hunks.
"""

from __future__ import annotations

import difflib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unidiff import PatchSet

from toolgate.review import matching
from toolgate.review.diff import Hunk, apply_hunks, diff_texts

_NO_EOL = "\\ No newline at end of file\n"
_UNBOUNDED = 10**9  # a search budget no test text exhausts


class _ReferenceMatcher(difflib.SequenceMatcher):
    def get_matching_blocks(self) -> list[difflib.Match]:  # type: ignore[override]
        a, b = self.a, self.b
        la, lb = len(a), len(b)
        count_a, count_b = Counter(a), Counter(b)
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
                run = 0
                while i + run < la and j + run < lb and a[i + run] == b[j + run]:
                    run += 1
                add(i, j, run)
                i, j = i + run, j + run
                continue
            i2, j2 = i, -1
            while i2 < la:
                line = a[i2]
                if count_a[line] == 1 and count_b[line] == 1:
                    j2 = b.index(line, j) if line in b[j:] else -1
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
        return result


def _diff_lines(lines: list[str]) -> list[str]:
    out = list(lines)
    if out and not out[-1].endswith("\n"):
        out[-1] = out[-1] + "\n" + _NO_EOL
    return out


def _span(start: int, stop: int) -> str:
    length = stop - start
    begin = start + 1
    if length == 1:
        return f"{begin}"
    if not length:
        begin -= 1
    return f"{begin},{length}"


def reference_diff(old: str, new: str, path: str, new_file: bool = False) -> str:
    a = _diff_lines(old.splitlines(keepends=True))
    b = _diff_lines(new.splitlines(keepends=True))
    out = [f"--- {'/dev/null' if new_file else 'a/' + path}\n", f"+++ b/{path}\n"]
    groups = list(_ReferenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3))
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


def reference_hunks(old: str, new: str, diff: str) -> list[Hunk]:
    if not diff:
        return []
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    hunks: list[Hunk] = []
    for patched_file in PatchSet(diff):
        for hunk in patched_file:
            src_first = hunk.source_start - 1 if hunk.source_length else hunk.source_start
            tgt_first = hunk.target_start - 1 if hunk.target_length else hunk.target_start
            lead = 0
            for line in hunk:
                if not line.is_context:
                    break
                lead += 1
            trail = 0
            for line in reversed(list(hunk)):
                if not line.is_context:
                    break
                trail += 1
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


def _check(old: str, new: str, new_file: bool = False) -> None:
    expected = reference_diff(old, new, "f.py", new_file)
    got = diff_texts(old, new, "f.py", new_file=new_file)
    assert got.text == expected
    if all(line.endswith("\n") for line in expected.splitlines(keepends=True)):
        assert got.hunks == reference_hunks(old, new, expected)
    else:
        # unidiff splits only at "\n": it misreads lines that end in another break (a lone
        # "\r", a form feed), failing or losing hunks. The hunks must rebuild the new text.
        assert apply_hunks(old, got.hunks) == new
    # The list walk on its own must agree too, whatever the texts hold.
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    listed = matching.match_lists(a, b)
    reference = _ReferenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
    assert listed == [tuple(m) for m in reference]


# Few distinct lines, so repeats (and so the search for unique lines) are common.
_LINE = st.sampled_from(
    ["a\n", "b\n", "c\n", "\n", "}\n", "x = 1\n", "def f():\n", "    return x\n", "only\n"]
)
_RARE = st.builds(lambda n: f"line {n}\n", st.integers(0, 60))
_ODD = st.sampled_from(["a\r\n", "b\r", "c\x0c", "d\u2028", "é\n", "\x85\n"])


def _text(line: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda lines, cut: "".join(lines)[:-1] if cut and lines else "".join(lines),
        st.lists(line, max_size=60),
        st.booleans(),
    )


def _edited(draw: st.DrawFn, line: st.SearchStrategy[str]) -> tuple[str, str]:
    old = draw(st.lists(line, max_size=80))
    new = list(old)
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.integers(0, len(new)))
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        if kind == "insert":
            new[at:at] = draw(st.lists(line, min_size=1, max_size=3))
        elif at < len(new):
            new[at : at + draw(st.integers(1, 3))] = [] if kind == "delete" else [draw(line)]
    a, b = "".join(old), "".join(new)
    if draw(st.booleans()) and a:
        a = a[:-1]
    if draw(st.booleans()) and b:
        b = b[:-1]
    return a, b


@st.composite
def _edits(draw: st.DrawFn) -> tuple[str, str]:
    return _edited(draw, st.one_of(_LINE, _RARE))


@st.composite
def _odd_edits(draw: st.DrawFn) -> tuple[str, str]:
    return _edited(draw, st.one_of(_LINE, _RARE, _ODD))


@settings(max_examples=600, deadline=None)
@given(pair=_edits())
def test_edited_texts(pair: tuple[str, str]) -> None:
    _check(*pair)


@settings(max_examples=300, deadline=None)
@given(old=_text(st.one_of(_LINE, _RARE)), new=_text(st.one_of(_LINE, _RARE)))
def test_unrelated_texts(old: str, new: str) -> None:
    _check(old, new)


@settings(max_examples=300, deadline=None)
@given(pair=_odd_edits())
def test_texts_with_other_line_breaks(pair: tuple[str, str]) -> None:
    _check(*pair)


@settings(max_examples=100, deadline=None)
@given(new=_text(st.one_of(_LINE, _RARE)))
def test_new_files(new: str) -> None:
    _check("", new, new_file=True)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("", ""),
        ("a", "a"),
        ("a", "b"),
        ("a", "a\n"),
        ("a\n", "a"),
        ("x\n" * 10 + "a\nb\nc", "X\n" + "x\n" * 9 + "a\nb\nc"),
        ("a\nb\nc", "a\nB\nc"),
        ("only\n", ""),
        ("", "only"),
        ("a\nb\n", "b\na\n"),
        ("u\n" * 3 + "v\n", "v\n" + "u\n" * 3),
    ],
)
def test_small_cases(old: str, new: str) -> None:
    _check(old, new)


def _large(changes: int, repeated: bool = False) -> tuple[str, str]:
    body = [f"value_{i} = compute({i})\n" for i in range(3000)]
    if repeated:
        body = body[:1500] * 2  # every line occurs twice: no line is unique
    old = "".join(body)
    lines = list(body)
    for k in range(changes):
        lines[k * (3000 // max(changes, 1)) + 7] = f"changed_{k} = 1\n"
    del lines[1499]
    lines.insert(2100, "inserted = True\n")
    return old, "".join(lines)


@pytest.mark.parametrize(("changes", "repeated"), [(1, False), (10, False), (40, True)])
def test_large_files(changes: int, repeated: bool) -> None:
    _check(*_large(changes, repeated))


def test_text_walk_hands_over_when_searching_grows_long() -> None:
    old, new = _large(40, repeated=True)
    with pytest.raises(matching.SearchTooLong):
        matching.match_texts(old, new, budget_factor=1)
    _check(old, new)


def test_text_walk_passes_by_a_line_that_recurs_in_a_later_gap() -> None:
    # "L" is unique in the old text and is first found early in the new one, but an inserted
    # copy further on makes it occur twice there, so the walk must meet again at "y" instead.
    old, new = "x\nL\ny\nz\n", "X\nL\ny\nL\nz\n"
    lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    expected = matching.match_lists(*lines)
    assert matching.match_texts(old, new, _UNBOUNDED)[2] == expected
    assert matching.match_texts(old, new, _UNBOUNDED, exact=True)[2] == expected
    _check(old, new)


@settings(max_examples=300, deadline=None)
@given(pair=_edits(), exact=st.booleans())
def test_text_walk_agrees_with_list_walk(pair: tuple[str, str], exact: bool) -> None:
    old, new = pair
    a, b, blocks = matching.match_texts(old, new, _UNBOUNDED, exact=exact)
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    assert blocks == matching.match_lists(old_lines, new_lines)
    assert (a.count, b.count) == (len(old_lines), len(new_lines))
    for line in range(a.count + 1):
        assert a.lines(line, a.count) == old_lines[line:]
        assert b.lines(0, min(line, b.count)) == new_lines[: min(line, b.count)]
