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


def test_a_quoted_args_attribute_whose_end_is_missing_is_still_the_call() -> None:
    # What the embedded 0.5B model writes when asked to run the tests, and variations of it.
    for text, name, arguments in (
        ('<tool name="run_tests" args="{}</tool>', "run_tests", {}),
        ('<tool name="git_add" args="{"files": ["a.py"]}"></tool>', "git_add", {"files": ["a.py"]}),
        ('<tool name="git_add" args="{"files": ["a.py"]}"</tool>', "git_add", {"files": ["a.py"]}),
        (
            '<tool name="run_tests" args="{\\"command\\": \\"pytest -q\\"}"</tool>',
            "run_tests",
            {"command": "pytest -q"},
        ),
    ):
        whole = "Running them. " + text + " Done."
        result = parse_text(whole, TOOLS)
        assert [(c.name, c.arguments) for c in result.calls] == [(name, arguments)], text
        assert result.errors == []
        assert result.content == "Running them.  Done."
        for size in (1, 4, 9):
            calls, errors = _chunked(whole, size)
            assert calls == result.calls and errors == [], (text, size)


def test_a_quoted_args_attribute_without_its_close_tag_runs_nothing() -> None:
    for text, why in (
        ('<tool name="run_tests" args="{}" and then some prose', "other text follows"),
        ('<tool name="run_tests" args="{}', "the output ended"),
        ('<tool name="run_tests" args="{"command": "pytest', "the output ended"),
    ):
        result = parse_text(text, TOOLS)
        assert result.calls == [], text
        assert len(result.errors) == 1 and why in result.errors[0].error, text
        for size in (1, 4, 9):
            calls, errors = _chunked(text, size)
            assert calls == [] and [e.error for e in errors] == [result.errors[0].error]


def test_a_tag_with_a_blank_after_the_angle_bracket_is_read() -> None:
    # The embedded model's own output, after four well-formed calls in the same answer.
    text = (
        '<tool name="list_directory" args>{}</tool>\n'
        '< tool name="git_status" args>{}</tool>\n'
        '< tool name="git_add" args>{"files":["calc.py"]}</tool>\n'
        '< tool name="run_tests" args>{</tool>\n'
        "The tests passed; 2 < 3 and a < tool count are prose.\n"
    )
    result = parse_text(text, TOOLS)
    assert [(c.name, c.arguments, c.syntax) for c in result.calls] == [
        ("list_directory", {}, "tag"),
        ("git_status", {}, "spaced_tag"),
        ("git_add", {"files": ["calc.py"]}, "spaced_tag"),
    ]
    (error,) = result.errors
    assert error.error.startswith("spaced_tag: broken JSON in the arguments of 'run_tests'")
    assert '<tool name="NAME" args>' in error.error  # the form to write instead
    assert result.content == "The tests passed; 2 < 3 and a < tool count are prose.\n"
    for size in (1, 3, 7, len(text)):
        calls, errors = _chunked(text, size)
        assert calls == result.calls and len(errors) == 1


def test_a_spaced_tag_whose_body_is_not_name_and_arguments_says_so() -> None:
    result = parse_text("< tool name= oops, no closing angle</tool>", TOOLS)
    assert result.calls == []
    (error,) = result.errors
    assert 'after "< tool name=" expected "NAME" args>{JSON}' in error.error
