"""Variations small models write that a person still reads as a call."""

from __future__ import annotations

from tests.calls.helpers import TOOLS

from toolgate.calls import StreamingCallParser, parse_text


def _chunked(text: str, size: int) -> tuple[list, list]:
    parser = StreamingCallParser(TOOLS)
    items = []
    for i in range(0, len(text), size):
        items += parser.feed(text[i : i + size])
    items += parser.finish()
    calls = [i for i in items if hasattr(i, "arguments")]
    errors = [i for i in items if not hasattr(i, "arguments")]
    return calls, errors


def test_one_closing_brace_too_many_is_still_the_call() -> None:
    text = 'Staging it.\n<tool name="git_add" args>{"files": ["greet.py"]}}</tool>\n'
    result = parse_text(text, TOOLS)
    assert [(c.name, c.arguments) for c in result.calls] == [("git_add", {"files": ["greet.py"]})]
    assert result.errors == []
    for size in (1, 3, 7, len(text)):
        calls, errors = _chunked(text, size)
        assert calls == result.calls and errors == []


def test_other_text_after_the_json_is_still_an_error() -> None:
    result = parse_text('<tool name="git_add" args>{"files": ["a"]} and more</tool>', TOOLS)
    assert result.calls == []
    assert "Extra data" in result.errors[0].error


def test_arguments_written_as_the_args_attribute() -> None:
    for text in (
        '<tool name="git_add" args={"files": ["greet.py"]}</tool>',
        '<tool name="git_add" args={"files": ["greet.py"]}></tool>',
        '<tool name="git_add" args=\'{"files": ["greet.py"]}\'></tool>',
    ):
        result = parse_text("Next: " + text + " done", TOOLS)
        assert [(c.name, c.arguments) for c in result.calls] == [
            ("git_add", {"files": ["greet.py"]})
        ], text
        assert result.content == "Next:  done"
        for size in (1, 4, 9):
            calls, errors = _chunked("Next: " + text + " done", size)
            assert calls == result.calls and errors == []


def test_an_args_attribute_call_cut_off_at_the_end_is_an_error() -> None:
    text = 'Editing now. <tool name="edit_file" args={"path": "README.md", "search": "a"'
    result = parse_text(text, TOOLS)
    assert result.calls == []
    assert len(result.errors) == 1 and "edit_file" in result.errors[0].raw_excerpt
    for size in (1, 5, 13):
        calls, errors = _chunked(text, size)
        assert calls == [] and [e.error for e in errors] == [result.errors[0].error]
