"""One test per recognised syntax, with the variations small models write."""

from __future__ import annotations

import pytest

from toolgate.calls import parse_text

from .helpers import TOOLS


def calls(text: str, tools=TOOLS, **kw) -> list[tuple[str, dict, str]]:
    result = parse_text(text, tools, **kw)
    assert result.errors == [], result.errors
    return [(c.name, c.arguments, c.syntax) for c in result.calls]


def test_tag_without_args_attribute() -> None:
    assert calls('<tool name="read_file">{"path": "a"}</tool>') == [
        ("read_file", {"path": "a"}, "tag")
    ]


def test_tag_with_single_quotes_and_spaces() -> None:
    assert calls('<tool  name = \'read_file\'  args >{"path": "a"}</tool>') == [
        ("read_file", {"path": "a"}, "tag")
    ]


def test_tag_with_html_escaped_quotes() -> None:
    text = "<tool name=&quot;read_file&quot; args>{&quot;path&quot;: &quot;a b&quot;}</tool>"
    assert calls(text) == [("read_file", {"path": "a b"}, "tag")]


def test_tag_with_fenced_body_and_wrapped_arguments() -> None:
    text = (
        '<tool name="read_file" args>\n```json\n'
        '{"name": "read_file", "arguments": {"path": "a"}}\n```\n</tool>'
    )
    assert calls(text) == [("read_file", {"path": "a"}, "tag")]


def test_tag_without_a_name_holding_a_name_and_arguments_object() -> None:
    text = '<tool>{"name": "read_file", "arguments": {"path": "a"}}</tool>'
    assert calls(text) == [("read_file", {"path": "a"}, "tag")]


def test_tag_with_close_tag_inside_a_json_string() -> None:
    text = '<tool name="write_file" args>{"path": "t.xml", "content": "<tool>x</tool>"}</tool>'
    assert calls(text) == [("write_file", {"path": "t.xml", "content": "<tool>x</tool>"}, "tag")]


def test_tag_with_raw_newlines_inside_strings() -> None:
    text = '<tool name="write_file" args>{"path": "a", "content": "line1\nline2\n"}</tool>'
    assert calls(text) == [("write_file", {"path": "a", "content": "line1\nline2\n"}, "tag")]


def test_short_tag_closes_with_its_json() -> None:
    result = parse_text('<tool:read_file>{"path": "a"} and then prose', TOOLS)
    assert [(c.arguments, c.deprecated_syntax) for c in result.calls] == [({"path": "a"}, True)]
    assert result.content == "and then prose"


@pytest.mark.parametrize(
    ("command", "tool"),
    [
        ("pytest -q tests/test_a.py", "run_tests"),
        ("py.test -x", "run_tests"),
        ("python -m pytest -k slow", "run_tests"),
        ("python3 -m pytest", "run_tests"),
        ("pytest", "run_tests"),
        ("pytestify --now", "run_command"),
        ("ls -la", "run_command"),
        ("python setup.py build", "run_command"),
    ],
)
def test_arrow_run_command(command: str, tool: str) -> None:
    text = f"I'll run it.\n>>> RUN COMMAND\n{command}\nWaiting."
    result = parse_text(text, TOOLS)
    assert [(c.name, c.arguments, c.syntax) for c in result.calls] == [
        (tool, {"command": command}, "arrow_block")
    ]
    assert result.content == "I'll run it.\n\nWaiting."


def test_arrow_run_command_on_the_same_line_and_in_a_fence() -> None:
    assert calls(">>> RUN COMMAND: pytest -q") == [
        ("run_tests", {"command": "pytest -q"}, "arrow_block")
    ]
    assert calls(">>> RUN COMMAND\n\n```bash\nls src\n```\n") == [
        ("run_command", {"command": "ls src"}, "arrow_block")
    ]


def test_arrow_write_file_keeps_the_fence_body_verbatim() -> None:
    body = "def f():\r\n    return '```'\r\n\r\n"
    text = f">>> WRITE FILE: src/f.py\r\n```python\r\n{body}```\r\nWritten."
    result = parse_text(text, TOOLS)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("write_file", {"path": "src/f.py", "content": body})
    ]
    assert result.content == "Written."


def test_arrow_write_file_with_a_longer_fence_holding_a_fence() -> None:
    text = ">>> WRITE FILE: README.md\n````markdown\n# T\n```sh\nls\n```\n````\n"
    assert calls(text) == [
        ("write_file", {"path": "README.md", "content": "# T\n```sh\nls\n```\n"}, "arrow_block")
    ]


def test_arrow_write_file_without_fence_is_an_error() -> None:
    result = parse_text(">>> WRITE FILE: a.py\nx = 1\n", TOOLS)
    assert result.calls == []
    assert "must be followed by a fenced code block" in result.errors[0].error


def test_hermes_tool_call() -> None:
    text = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>'
    assert calls(text) == [("read_file", {"path": "a"}, "hermes")]


def test_hermes_unknown_tool_is_an_error() -> None:
    result = parse_text('<tool_call>{"name": "rm", "arguments": {}}</tool_call>', TOOLS)
    assert result.errors[0].error.startswith("unknown tool 'rm'; available:")


def test_qwen_xml_typed_by_schema_inside_tool_call() -> None:
    text = (
        "<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/a.py\n</parameter>\n"
        "<parameter=content>\n\nx = 1\n\n</parameter>\n</function>\n</tool_call>"
    )
    assert calls(text) == [("write_file", {"path": "src/a.py", "content": "\nx = 1\n"}, "qwen_xml")]


def test_qwen_xml_typed_values() -> None:
    tools = {
        "t": {
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "f": {"type": "number"},
                "b": {"type": "boolean"},
                "a": {"type": "array"},
                "o": {"type": "object"},
                "s": {"type": "string"},
            },
        }
    }
    text = (
        "<function=t><parameter=n>\n42\n</parameter><parameter=f>2.5</parameter>"
        '<parameter=b>False</parameter><parameter=a>[1, "x"]</parameter>'
        '<parameter=o>{"k": null}</parameter><parameter=s>\n 007 \n</parameter></function>'
    )
    assert calls(text, tools) == [
        (
            "t",
            {"n": 42, "f": 2.5, "b": False, "a": [1, "x"], "o": {"k": None}, "s": " 007 "},
            "qwen_xml",
        )
    ]


def test_qwen_xml_missing_parameter_close_and_bare_function() -> None:
    text = (
        "<function=list_directory>\n<parameter=path>\nsrc\n<parameter=recursive>\ntrue\n</function>"
    )
    assert calls(text) == [("list_directory", {"path": "src", "recursive": True}, "qwen_xml")]


def test_mistral_list_and_string_arguments() -> None:
    text = (
        '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a"}}, '
        '{"name": "git_commit", "arguments": "{\\"message\\": \\"m\\"}"}]'
    )
    assert calls(text) == [
        ("read_file", {"path": "a"}, "mistral"),
        ("git_commit", {"message": "m"}, "mistral"),
    ]


def test_mistral_v11_several_calls() -> None:
    text = '[TOOL_CALLS]read_file[ARGS]{"path": "a"}[TOOL_CALLS]git_status[ARGS]{}'
    assert calls(text) == [
        ("read_file", {"path": "a"}, "mistral_v11"),
        ("git_status", {}, "mistral_v11"),
    ]


def test_llama_json_alone_on_its_line() -> None:
    text = 'Checking.\n{"name": "read_file", "parameters": {"path": "a"}}\n'
    result = parse_text(text, TOOLS)
    assert [(c.name, c.arguments, c.syntax) for c in result.calls] == [
        ("read_file", {"path": "a"}, "llama_json")
    ]
    assert result.content == "Checking."


def test_llama_json_with_arguments_key_and_python_tag() -> None:
    assert calls('{"name": "read_file", "arguments": {"path": "a"}}') == [
        ("read_file", {"path": "a"}, "llama_json")
    ]
    assert calls('<|python_tag|>{"name": "read_file", "parameters": {"path": "b"}}') == [
        ("read_file", {"path": "b"}, "llama_json")
    ]


def test_llama_json_not_alone_or_unknown_is_prose() -> None:
    for text in [
        'Write {"name": "read_file", "parameters": {"path": "a"}} to call it.',
        '{"name": "read_file", "parameters": {"path": "a"}} is the format',
        '{"name": "Ada", "parameters": {"age": 36}}',
    ]:
        result = parse_text(text, TOOLS)
        assert result.calls == [] and result.errors == [] and result.content == text


def test_pythonic_call_list() -> None:
    text = "[read_file(path='a.py'), list_directory(path=\"src\", recursive=true), git_status()]"
    assert calls(text) == [
        ("read_file", {"path": "a.py"}, "pythonic"),
        ("list_directory", {"path": "src", "recursive": True}, "pythonic"),
        ("git_status", {}, "pythonic"),
    ]


def test_pythonic_is_parsed_safely_never_evaluated() -> None:
    result = parse_text("[read_file(path=__import__('os').system('true'))]", TOOLS)
    assert result.calls == []
    assert "not a literal" in result.errors[0].error


def test_pythonic_list_comprehension_is_prose() -> None:
    text = "[read_file(p) for p in paths]"
    result = parse_text(text, TOOLS)
    assert result.calls == [] and result.content == text


def test_xml_element_with_typed_children() -> None:
    text = (
        "<list_directory><path>src</path><recursive>true</recursive></list_directory>\n"
        "<write_file>\n<path>a.txt</path>\n<content>\nhello\n</content>\n</write_file>"
    )
    assert calls(text) == [
        ("list_directory", {"path": "src", "recursive": True}, "xml_element"),
        ("write_file", {"path": "a.txt", "content": "hello"}, "xml_element"),
    ]


def test_xml_element_of_unknown_or_prose_shape_is_prose() -> None:
    for text in ["<div><p>hi</p></div>", "Use <read_file> to read a file."]:
        result = parse_text(text, TOOLS)
        assert result.calls == [] and result.errors == [] and result.content == text


@pytest.mark.parametrize("lang", ["json", "tool", "tool_call", "JSON"])
def test_fenced_json_call(lang: str) -> None:
    text = f'Here:\n```{lang}\n{{"name": "read_file", "arguments": {{"path": "a"}}}}\n```\nok'
    result = parse_text(text, TOOLS)
    assert [(c.name, c.arguments, c.syntax) for c in result.calls] == [
        ("read_file", {"path": "a"}, "fenced_json")
    ]
    assert result.content == "Here:\n\nok"


def test_fenced_json_list_with_parameters_key() -> None:
    text = (
        '```json\n[{"name": "read_file", "parameters": {"path": "a"}},\n'
        ' {"name": "git_status", "arguments": {}}]\n```'
    )
    assert calls(text) == [
        ("read_file", {"path": "a"}, "fenced_json"),
        ("git_status", {}, "fenced_json"),
    ]


def test_fenced_json_that_is_not_a_call_stays_prose() -> None:
    for text in [
        '```json\n{"name": "Ada", "age": 36}\n```',
        '```json\n{"name": "read_file", "arguments": {"path": "a"}, "note": "example"}\n```',
        '```json\n{"name": "read_file", "arguments": {"path": "a"}}, {"x": 1}\n```',
        '```python\n{"name": "read_file", "arguments": {"path": "a"}}\n```',
        '```json\n{"name": "read_file", "arguments": {"tool": "<tool name=\\"x\\">"}}\n```',
    ]:
        result = parse_text(text, TOOLS)
        assert result.calls == [] and result.errors == [] and result.content == text


def test_fenced_tool_block_with_unknown_name_is_an_error() -> None:
    result = parse_text('```tool\n{"name": "rm_rf", "arguments": {}}\n```', TOOLS)
    assert result.calls == [] and result.errors[0].error.startswith("unknown tool 'rm_rf'")


@pytest.mark.parametrize(
    "text",
    [
        '```\n<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>\n```',
        '~~~\n[TOOL_CALLS]read_file[ARGS]{"path": "a"}\n~~~',
        '```python\n[read_file(path="a")]\n```',
        '  ```\n  {"name": "read_file", "parameters": {"path": "a"}}\n  ```',
        "```\n>>> RUN COMMAND\npytest\n```",
        'Inline: `<tool:read_file>{"path": "a"}` is the old form.',
    ],
)
def test_every_syntax_inside_code_is_an_example(text: str) -> None:
    result = parse_text(text, TOOLS)
    assert result.calls == [] and result.errors == [] and result.content == text


@pytest.mark.parametrize(
    "text",
    [
        '<tool name="read_file" args>{"path": "a"}',
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}',
        "<function=read_file><parameter=path>a</parameter>",
        '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a"}}',
        '{"name": "read_file", "parameters": {"path": "a"}',
        '[read_file(path="a")',
        "<read_file><path>a</path>",
        '```json\n{"name": "read_file", "arguments": {"path": "a"}}\n',
        ">>> WRITE FILE: a.py\n```\nx = 1\n",
        ">>> RUN COMMAND\n",
    ],
)
def test_every_syntax_cut_off_is_an_error_never_a_call(text: str) -> None:
    result = parse_text(text, TOOLS)
    assert result.calls == []
    assert len(result.errors) == 1


def test_every_syntax_in_one_answer() -> None:
    text = "\n".join(
        [
            "Plan:",
            '<tool name="read_file" args>{"path": "1"}</tool>',
            '<tool:read_file>{"path": "2"}</tool>',
            ">>> RUN COMMAND",
            "pytest -q",
            '<tool_call>{"name": "read_file", "arguments": {"path": "3"}}</tool_call>',
            "<function=read_file><parameter=path>4</parameter></function>",
            '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "5"}}]',
            '[TOOL_CALLS]read_file[ARGS]{"path": "6"}',
            '{"name": "read_file", "parameters": {"path": "7"}}',
            '[read_file(path="8")]',
            "<read_file><path>9</path></read_file>",
            "```json",
            '{"name": "read_file", "arguments": {"path": "10"}}',
            "```",
            "Done.",
        ]
    )
    result = parse_text(text, TOOLS)
    assert result.errors == []
    assert [c.syntax for c in result.calls] == [
        "tag",
        "short_tag",
        "arrow_block",
        "hermes",
        "qwen_xml",
        "mistral",
        "mistral_v11",
        "llama_json",
        "pythonic",
        "xml_element",
        "fenced_json",
    ]
    assert [c.arguments.get("path") for c in result.calls] == [
        "1",
        "2",
        None,
        "3",
        "4",
        "5",
        "6",
        "7",
        "8",
        "9",
        "10",
    ]
    assert result.content == "Plan:\n\nDone."
