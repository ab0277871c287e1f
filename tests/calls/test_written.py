"""Calls written into an answer's words, read whole, cut short or naming no real tool."""

from __future__ import annotations

import html

import pytest
from tests.calls.helpers import TOOLS

from toolgate.calls import StreamingCallParser
from toolgate.calls.written import WrittenCall, written_call


def read(text: str) -> WrittenCall | None:
    return written_call(text, StreamingCallParser(TOOLS))


CALLS = {
    # what the embedded model wrote behind llama-cpp-python's own server
    "chatml-function-calling-stub": (
        "functions.write_file:",
        "write_file",
        "the call to 'write_file' ends before its arguments",
    ),
    "qwen-template-invented-tool": (
        '{"name": "run_greet", "arguments": {"message": "Hello, World!"}}',
        "run_greet",
        "unknown tool 'run_greet'; available: ",
    ),
    "a-file-name-for-a-tool": (
        '{"name": "test_calc.py", "arguments": {"a": 2}}',
        "test_calc.py",
        "unknown tool 'test_calc.py'",
    ),
    # others
    "namespaced-with-index": ("functions.read_file:0", "read_file", "ends before its arguments"),
    "namespaced-with-arguments": ('functions.read_file: {"path": "a.py"}', "read_file", None),
    "namespaced-invented": ("functions.greet:", "greet", "unknown tool 'greet'"),
    "html-escaped-cut-short": (
        "```json\n{\n  &#34;name&#34;: &#34;read_file&#34,\n  &#34;args&#34;: {&#34;path",
        "read_file",
        "cut short",
    ),
    "tag-alone": ("<tool_call>", None, "unclosed <tool_call>"),
    "tag-with-an-invented-tool": (
        '<tool_call>{"name": "greet", "arguments": {}}</tool_call>',
        None,
        "unknown tool 'greet'",
    ),
    "name-paren-cut-short": ("write_file(", "write_file", "cut short before its ')'"),
    "name-paren-whole": ('read_file(path="a.py")', "read_file", None),
    "json-cut-short": ('{"name": "write_file", "argu', None, "nothing was run"),
    "json-after-prose": ('I will greet.\n\n{"name": "greet", "arguments": {}}', "greet", "greet"),
    "json-fenced": ('```json\n{"name": "greet", "arguments": {}}\n```', "greet", "greet"),
    "json-arguments-first": ('{"arguments": {}, "name": "greet"}', "greet", "greet"),
    "json-one-after-another": (
        '{"name": "greet", "arguments": {}}\n{"name": "wave", "arguments": {}}',
        "greet",
        "greet",
    ),
    "openai-shape": (
        '[{"type": "function", "function": {"name": "greet", "arguments": "{}"}}]',
        "greet",
        "greet",
    ),
    "registered-tool-without-arguments": ('{"name": "git_status"}', "git_status", None),
    # the embedded model in text mode, behind llama-cpp-python's chatml-function-calling
    "args-and-reasoning-beside-them": (
        '```json\n{\n  "name": "write_file",\n  "args": {"path": "./hello.py", "content": "x"},'
        '\n  "_reasoningForCall": "Write hello.py."\n}\n```',
        "write_file",
        None,
    ),
    "read-whole-by-the-parser": (
        '<tool name="read_file" args>{"path": "a.py"}</tool>',
        "read_file",
        None,
    ),
}


@pytest.mark.parametrize(("text", "name", "problem"), CALLS.values(), ids=CALLS.keys())
def test_a_call_written_in_the_answer_is_found(
    text: str, name: str | None, problem: str | None
) -> None:
    found = read(text)
    assert found is not None
    assert found.name == name
    if problem is None:
        assert found.problem is None
    else:
        assert problem in (found.problem or "")
    assert found.excerpt
    assert found.excerpt in html.unescape(text).replace("```json\n", "").replace("\n```", "")


WORDS = {
    "plain": "Done: hello.py has hello(), which returns 'hello'.",
    "a-tool-named-in-prose": 'I called write_file(path="hello.py") and it worked.',
    "a-call-in-inline-code": "Run `read_file(path='a.py')` to see it.",
    "code": "```python\ndef hello():\n    return 'hello'\n```",
    "json-data": '{"name": "Ada", "age": 36}',
    "json-name-only-not-a-tool": '{"name": "Ada"}',
    "json-with-prose-after": '{"name": "greet", "arguments": {}}\nThat is its shape.',
    "python-call-of-no-tool": 'print("hello")',
    "functions-in-a-sentence": "The functions.py module holds helpers: add and sub.",
    "a-file-called-functions": "Changed:\nfunctions.py: added add()\ntest_functions.py: a test",
}


@pytest.mark.parametrize("text", WORDS.values(), ids=WORDS.keys())
def test_words_are_not_a_call(text: str) -> None:
    assert read(text) is None
