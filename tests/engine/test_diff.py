"""Diffs and hunks: the anchored matcher agrees with difflib, and any subset of hunks applies."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from toolgate.review import make_proposal
from toolgate.review.diff import apply_hunks, unified_diff

lines = st.lists(
    st.sampled_from(
        [
            "a\n",
            "b\n",
            "c\n",
            "def f():\n",
            "    pass\n",
            "x = 1\n",
            "unique one\n",
            "unique two\n",
            "\n",
        ]
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(old=lines, new=lines, cut_eol=st.booleans())
def test_every_subset_of_hunks_applies(old: list[str], new: list[str], cut_eol: bool) -> None:
    a, b = "".join(old), "".join(new)
    if cut_eol and b:
        b = b[:-1]
    proposal = make_proposal(
        run_id="r", call_id="c", tool="write_file", path="f.py", original=a, proposed=b
    )
    assert apply_hunks(a, proposal.hunks) == b
    assert apply_hunks(a, proposal.hunks, set()) == a
    for hunk in proposal.hunks:
        partial = apply_hunks(a, proposal.hunks, {hunk.index})
        assert (partial == a) == (hunk.old_lines == hunk.new_lines)


def test_same_diff_as_difflib_on_a_large_file() -> None:
    old = "".join(f"value_{i} = compute({i})\n" for i in range(3000))
    changed = old.splitlines(keepends=True)
    for k in range(10):
        changed[k * 290 + 5] = f"changed_{k} = 1\n"
    del changed[1500]
    changed.insert(2000, "inserted = True\n")
    new = "".join(changed)
    ours = unified_diff(old, new, "f.py")
    theirs = "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/f.py", "b/f.py")
    )
    assert ours == theirs
    assert ours.count("@@ -") == 12


def test_no_change_is_an_empty_diff() -> None:
    assert unified_diff("same\n", "same\n", "f.py") == ""
