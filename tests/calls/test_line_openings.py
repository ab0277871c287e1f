"""Line-start openings held back when a chunk ends inside them, however far they are indented."""

from __future__ import annotations

import pytest

from toolgate.calls import StreamingCallParser

from .helpers import TOOLS

CALL = '[{"name": "read_file", "arguments": {"path": "a.py"}}]\n'


@pytest.mark.parametrize("blanks", [0, 5, 30, 60])
@pytest.mark.parametrize("cut", ["f", "functo", "functools"])
def test_a_functools_line_cut_after_many_blanks_is_still_a_call(blanks: int, cut: str) -> None:
    """The start of `functools[` at a chunk's end is held back, not passed on as prose."""
    head = "Reading.\n" + " " * blanks + cut
    rest = "functools"[len(cut) :] + CALL
    parser = StreamingCallParser(TOOLS)
    items = parser.feed(head) + parser.feed(rest) + parser.finish()
    assert [(i.name, i.arguments, i.syntax) for i in items] == [
        ("read_file", {"path": "a.py"}, "phi4_mini")
    ]
    assert parser.content.strip() == "Reading."
