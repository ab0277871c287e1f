"""The families read by the syntaxes under `toolgate.calls.syntaxes`: calls, errors, prose."""

from __future__ import annotations

import pytest

from toolgate.calls import parse_text
from toolgate.calls.syntaxes import BUILTIN

from .helpers import TOOLS, run_in_chunks

READ = {"path": "a.py"}

CASES = [
    (
        "kimi_k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0"
        '<|tool_call_argument_begin|>{"path": "a.py"}<|tool_call_end|><|tool_calls_section_end|>',
    ),
    (
        "deepseek",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n"
        '{"path": "a.py"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    ),
    (
        "deepseek",
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "a.py"}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    ),
    (
        "harmony",
        "<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json"
        '<|message|>{"path": "a.py"}<|call|>',
    ),
    (
        "glm",
        "<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>a.py</arg_value>\n</tool_call>",
    ),
    ("functionary", '<function=read_file>{"path": "a.py"}</function>'),
    ("lfm2", '<|tool_call_start|>[read_file(path="a.py")]<|tool_call_end|>'),
    ("llama4", '<|python_start|>[read_file(path="a.py")]<|python_end|>'),
    (
        "lfm2",
        '<|tool_call_start|>[{"name": "read_file", "arguments": {"path": "a.py"}}]'
        "<|tool_call_end|>",
    ),
    ("granite", '<|tool_call|>[{"name": "read_file", "arguments": {"path": "a.py"}}]'),
    (
        "granite",
        '<|tool_call|>[{"name": "read_file", "arguments": {"path": "a.py"}}]<|/tool_call|>',
    ),
    ("jamba", '<tool_calls>[{"name": "read_file", "arguments": {"path": "a.py"}}]</tool_calls>'),
    (
        "internlm",
        '<|action_start|><|plugin|>\n{"name": "read_file", "parameters": {"path": "a.py"}}'
        "<|action_end|>",
    ),
    (
        "command_r",
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "read_file", '
        '"parameters": {"path": "a.py"}}]<|END_ACTION|>',
    ),
    ("olmo3", '<function_calls>\nread_file(path="a.py")\n</function_calls>'),
    (
        "function_gemma",
        "<start_function_call>call:read_file{path:<escape>a.py<escape>}<end_function_call>",
    ),
    ("mistral_v11", '[TOOL_CALLS]read_file{"path": "a.py"}'),
    ("continue_tool", "```tool\nTOOL_NAME: read_file\nBEGIN_ARG: path\na.py\nEND_ARG\n```"),
]


@pytest.mark.parametrize(("syntax", "text"), CASES)
def test_each_family_reads_its_call_in_any_chunking(syntax: str, text: str) -> None:
    answer = f"Let me look.\n{text}\nThen I will fix it."
    result = parse_text(answer, TOOLS)
    assert result.errors == []
    assert [(c.name, c.arguments, c.syntax) for c in result.calls] == [("read_file", READ, syntax)]
    assert "Let me look." in result.content and "Then I will fix it." in result.content
    assert "read_file" not in result.content
    for size in (1, 3, 7):
        items, content = run_in_chunks(answer, list(range(size, len(answer), size)))
        assert [(i.name, i.arguments) for i in items] == [("read_file", READ)]
        assert content == result.content


@pytest.mark.parametrize(("syntax", "text"), CASES)
def test_each_family_cut_off_is_an_error_never_a_call(syntax: str, text: str) -> None:
    cut = text[: len(text) * 2 // 3]
    result = parse_text(cut, TOOLS)
    assert result.calls == []
    if syntax in ("harmony", "function_gemma"):
        # harmony ends at the output's end, so its cut JSON is an error; FunctionGemma's cut
        # opening is not yet an opening at all
        assert len(result.errors) <= 1
    else:
        assert len(result.errors) == 1


def test_each_builtin_syntax_names_its_models_and_shows_an_example() -> None:
    for cls in BUILTIN:
        doc = (__import__(cls.__module__, fromlist=["_"]).__doc__) or ""
        assert cls.models and cls.example and cls.name
        assert cls.models.split(",")[0].split()[0] in doc, cls.name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0"
            '<|tool_call_argument_begin|>{"path": "a.py"<|tool_call_end|>'
            "<|tool_calls_section_end|>",
            "kimi_k2: broken JSON in the arguments of 'read_file': Expecting ',' delimiter "
            "at line 1 column 16; expected <|tool_calls_section_begin|>",
        ),
        (
            '<tool_calls>[{"name": "read_file", "arguments": {"path": "a.py"}}]',
            "unclosed <tool_calls>: the output ended before </tool_calls>; nothing was run; "
            'expected <tool_calls>[{"name": "NAME"',
        ),
        (
            "<|tool_call|>read_file",
            "granite: expected a JSON list or object after <|tool_call|>; nothing was run",
        ),
        (
            "<|action_start|>{}<|action_end|>",
            "internlm: expected <|plugin|> after <|action_start|>; expected <|action_start|>",
        ),
        (
            '<function_calls>\nread_file("a.py")\n</function_calls>',
            "olmo3: the call to 'read_file' has positional arguments; write name=value",
        ),
        (
            "<|channel|>commentary to=functions.read_file <|constrain|>json",
            "harmony: a message header without <|message|>",
        ),
        (
            "```tool\nTOOL_NAME: read_file\nBEGIN_ARG: path\na.py\n```",
            "continue_tool: unexpected text after the arguments of 'read_file'",
        ),
        (
            '<tool_calls>[{"name": "nope", "arguments": {}}]</tool_calls>',
            "unknown tool 'nope'; available:",
        ),
    ],
)
def test_a_broken_call_gets_one_message_naming_the_syntax(text: str, message: str) -> None:
    result = parse_text(text, TOOLS)
    assert result.calls == []
    assert len(result.errors) == 1
    assert result.errors[0].error.startswith(message), result.errors[0].error


def test_a_harmony_call_whose_stop_token_was_stripped_ends_with_the_output() -> None:
    text = 'Reading.<|channel|>commentary to=functions.read_file json<|message|>{"path": "a.py"}'
    for size in (1, 5, len(text)):
        items, content = run_in_chunks(text, list(range(size, len(text), size)))
        assert [(i.name, i.arguments, i.syntax) for i in items] == [("read_file", READ, "harmony")]
        assert content == "Reading."


def test_harmony_messages_to_no_function_are_prose() -> None:
    text = (
        "<|channel|>analysis<|message|>The file is small.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>It is fixed.<|return|>"
    )
    result = parse_text(text, TOOLS)
    assert result.calls == [] and result.errors == []
    assert result.content == "The file is small.It is fixed."


def test_glm_values_are_typed_by_the_schema() -> None:
    text = (
        "<tool_call>list_directory\n<arg_key>path</arg_key>\n<arg_value>src</arg_value>\n"
        "<arg_key>recursive</arg_key>\n<arg_value>true</arg_value>\n</tool_call>"
    )
    (call,) = parse_text(text, TOOLS).calls
    assert call.arguments == {"path": "src", "recursive": True}


def test_kimi_and_deepseek_sections_hold_several_calls() -> None:
    kimi = (
        "<|tool_calls_section_begin|>"
        '<|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{"path": "a"}'
        "<|tool_call_end|>"
        "<|tool_call_begin|>functions.git_status:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
        "<|tool_calls_section_end|>"
    )
    assert [c.name for c in parse_text(kimi, TOOLS).calls] == ["read_file", "git_status"]
    deepseek = (
        "<｜tool▁calls▁begin｜>"
        '<｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "a"}<｜tool▁call▁end｜>'
        "<｜tool▁call▁begin｜>git_status<｜tool▁sep｜>{}<｜tool▁call▁end｜>"
        "<｜tool▁calls▁end｜>"
    )
    assert [c.name for c in parse_text(deepseek, TOOLS).calls] == ["read_file", "git_status"]


def test_a_family_inside_a_code_fence_is_an_example() -> None:
    text = '```\n<tool_calls>[{"name": "read_file", "arguments": {"path": "a"}}]</tool_calls>\n```'
    result = parse_text(text, TOOLS)
    assert result.calls == [] and result.errors == []
    assert result.content == text
