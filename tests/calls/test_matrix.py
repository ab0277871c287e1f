"""The ADR test matrix for the text protocol parser."""

from __future__ import annotations

from toolgate.calls import CallParseError, ParsedCall, StreamingCallParser, parse_text

from .helpers import TOOLS


def test_valid_canonical_tag() -> None:
    result = parse_text('<tool name="read_file" args>{"path": "src/app.py"}</tool>', TOOLS)
    assert result.errors == []
    assert result.calls == [
        ParsedCall(
            name="read_file",
            arguments={"path": "src/app.py"},
            syntax="tag",
            deprecated_syntax=False,
            raw_excerpt='<tool name="read_file" args>{"path": "src/app.py"}</tool>',
        )
    ]
    assert result.content == ""


def test_broken_json_is_an_error_and_nothing_runs() -> None:
    text = 'Reading.\n<tool name="read_file" args>{"path": "a.py",}</tool>\nDone.'
    result = parse_text(text, TOOLS)
    assert result.calls == []
    [err] = result.errors
    assert "broken JSON" in err.error and "read_file" in err.error
    assert '<tool name="NAME" args>' in err.error  # names the expected syntax
    assert err.raw_excerpt == '<tool name="read_file" args>{"path": "a.py",}</tool>'
    assert result.content == "Reading.\n\nDone."


def test_unterminated_string_ends_at_the_close_tag_and_later_calls_still_parse() -> None:
    text = (
        '<tool name="read_file" args>{"path": "a.py}</tool>\n<tool name="git_status" args>{}</tool>'
    )
    result = parse_text(text, TOOLS)
    assert [e.raw_excerpt for e in result.errors] == [
        '<tool name="read_file" args>{"path": "a.py}</tool>'
    ]
    assert [c.name for c in result.calls] == ["git_status"]


def test_nested_tag_is_one_error() -> None:
    text = (
        'A <tool name="write_file" args>{"path": "x", '
        '<tool name="read_file" args>{"path": "y"}</tool>}</tool> B'
    )
    result = parse_text(text, TOOLS)
    assert result.calls == []
    [err] = result.errors
    assert err.error.startswith("nested tag")
    assert err.raw_excerpt.endswith("}</tool>}</tool>")
    assert result.content == "A  B"


def test_empty_body_needing_arguments_is_an_error() -> None:
    result = parse_text('<tool name="read_file" args></tool>', TOOLS)
    assert result.calls == []
    assert [e.error for e in result.errors] == [
        "empty arguments; tool 'read_file' needs: path; "
        'expected <tool name="NAME" args>{"argument": "value"}</tool>'
    ]


def test_empty_body_is_fine_when_nothing_is_required() -> None:
    result = parse_text('<tool name="git_status" args></tool>', TOOLS)
    assert [(c.name, c.arguments) for c in result.calls] == [("git_status", {})]


def test_deprecated_short_form_allowed() -> None:
    result = parse_text('<tool:read_file>{"path": "a"}</tool>', TOOLS)
    [call] = result.calls
    assert (call.name, call.arguments, call.syntax, call.deprecated_syntax) == (
        "read_file",
        {"path": "a"},
        "short_tag",
        True,
    )


def test_deprecated_short_form_refused_when_flag_off() -> None:
    result = parse_text(
        'x <tool:read_file>{"path": "a"}</tool> y', TOOLS, allow_deprecated_syntax=False
    )
    assert result.calls == []
    [err] = result.errors
    assert "deprecated" in err.error and '<tool name="read_file" args>' in err.error
    assert result.content == "x  y"


def test_tag_inside_a_code_fence_is_an_example() -> None:
    text = (
        "To read a file, write:\n\n```\n"
        '<tool name="read_file" args>{"path": "a.py"}</tool>\n'
        "```\nThat is all."
    )
    result = parse_text(text, TOOLS)
    assert result.calls == [] and result.errors == []
    assert result.content == text


def test_several_calls_in_one_answer_keep_their_order() -> None:
    text = (
        '<tool name="read_file" args>{"path": "a"}</tool>\n'
        '<tool name="read_file" args>{"path": "b"}</tool>\n'
        '<tool name="run_tests" args>{"command": "pytest -q"}</tool>'
    )
    result = parse_text(text, TOOLS)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("read_file", {"path": "a"}),
        ("read_file", {"path": "b"}),
        ("run_tests", {"command": "pytest -q"}),
    ]
    assert result.content == ""


def test_text_before_and_after_is_kept_as_content() -> None:
    text = (
        "I will look at the module.\n\n\n"
        '<tool name="read_file" args>{"path": "m.py"}</tool>\n\n\n\n'
        "Then I will run the tests."
    )
    result = parse_text(text, TOOLS)
    assert len(result.calls) == 1
    assert result.content == "I will look at the module.\n\nThen I will run the tests."


def test_unicode_and_crlf() -> None:
    text = (
        "Voilà — 日本語 🙂\r\n"
        '<tool name="write_file" args>{\r\n  "path": "données/é.txt",\r\n'
        '  "content": "ligne 1\\r\\nligne 2 ✓"\r\n}</tool>\r\n'
        "Fin.\r\n"
    )
    result = parse_text(text, TOOLS)
    assert result.errors == []
    assert [c.arguments for c in result.calls] == [
        {"path": "données/é.txt", "content": "ligne 1\r\nligne 2 ✓"}
    ]
    assert result.content == "Voilà — 日本語 🙂\r\n\r\nFin.\r\n"


def test_unknown_tool_in_a_tag_is_an_error_listing_the_tools() -> None:
    result = parse_text('<tool name="delete_everything" args>{}</tool>', TOOLS)
    [err] = result.errors
    assert err.error.startswith("unknown tool 'delete_everything'; available: edit_file, ")
    assert "write_file" in err.error


def test_unclosed_tag_at_end_of_output_is_an_error_never_a_call() -> None:
    parser = StreamingCallParser(TOOLS)
    assert parser.feed('Let me write it. <tool name="write_file" args>{"path": "a", ') == []
    assert parser.feed('"content": "x"}') == []
    [err] = parser.finish()
    assert isinstance(err, CallParseError)
    assert err.error.startswith('unclosed <tool name="write_file">')
    assert parser.content == "Let me write it. "


def test_call_too_large_is_an_error() -> None:
    parser = StreamingCallParser(TOOLS, max_call_chars=5000)
    text = '<tool name="write_file" args>{"path": "a", "content": "' + "x" * 20000 + '"}</tool>'
    items = parser.feed(text) + parser.finish()
    assert isinstance(items[0], CallParseError) and items[0].error.startswith("call too large")
    assert not any(isinstance(i, ParsedCall) for i in items)
    assert len(items[0].raw_excerpt) <= 500
