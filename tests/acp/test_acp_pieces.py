"""The ACP front end's pure pieces: `<think>` splitting at any chunk boundary, result excerpts."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolgate.acp.results import excerpt, shown, summary_of_tests
from toolgate.acp.thoughts import ThinkSplitter
from toolgate.records import ToolResult


def split(pieces: list[str]) -> tuple[str, str]:
    """(thought, message) after feeding the pieces in order."""
    splitter = ThinkSplitter()
    out = [part for piece in pieces for part in splitter.feed(piece)] + splitter.finish()
    thought = "".join(text for kind, text in out if kind == "thought")
    message = "".join(text for kind, text in out if kind == "message")
    return thought, message


TEXT = "  <think>\nweighing it</think>\nThe answer."


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, len(TEXT)])
def test_a_think_block_is_split_at_any_chunk_size(size: int) -> None:
    pieces = [TEXT[i : i + size] for i in range(0, len(TEXT), size)]
    assert split(pieces) == ("weighing it", "The answer.")


def test_only_a_block_that_opens_the_answer_is_thought() -> None:
    assert split(["Use the <think> tag ", "like <think>x</think>."]) == (
        "",
        "Use the <think> tag like <think>x</think>.",
    )
    assert split(["<thin", "king aloud"]) == ("", "<thinking aloud")
    assert split(["no tags at all"]) == ("", "no tags at all")


def test_an_unclosed_block_is_all_thought_and_a_lone_close_is_text() -> None:
    assert split(["<think>still going </th"]) == ("still going </th", "")
    assert split(["reasoned</think>answer"]) == ("", "reasoned</think>answer")


def test_an_excerpt_keeps_the_first_lines_and_says_how_many() -> None:
    text = "".join(f"{n}\n" for n in range(100))
    kept = excerpt(text, lines=3)
    assert kept == "0\n1\n2\n… (100 lines in all)"
    assert excerpt("short\n") == "short"


def test_summary_of_tests_names_each_failure_at_its_line() -> None:
    data = {
        "summary": {"passed": 1, "failed": 2, "errors": 0},
        "failures": [
            {"test_id": "t.py::a", "file": "t.py", "line": 3, "message": "assert 1 ==\n 2"},
            {"test_id": "t.py::b", "file": "t.py", "line": 9, "message": "boom"},
        ],
    }
    assert summary_of_tests(data).splitlines() == [
        "tests: 1 passed, 2 failed, 0 errors (2 failures)",
        "t.py:3: t.py::a — assert 1 == 2",
        "t.py:9: t.py::b — boom",
    ]


def test_a_failure_outside_the_workspace_is_no_location(tmp_path: Path) -> None:
    data = {
        "summary": {"failed": 2},
        "failures": [
            {"test_id": "a", "file": "/etc/x.py", "line": 1, "message": ""},
            {"test_id": "b", "file": "../up.py", "line": 2, "message": ""},
        ],
    }
    found = shown(ToolResult.ok(data), tmp_path)
    assert found is not None and found.locations is None


def test_a_failed_call_shows_nothing_here(tmp_path: Path) -> None:
    assert shown(ToolResult.fail("no such file"), tmp_path) is None
