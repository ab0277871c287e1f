"""The families read by the syntaxes under `toolgate.calls.syntaxes`: calls, errors, prose."""

from __future__ import annotations

from typing import Any

import pytest

from toolgate.calls import CallParseError, ParsedCall, StreamingCallParser, parse_text
from toolgate.calls.syntaxes import BUILTIN
from toolgate.calls.syntaxes.deepseek_dsml import NAME

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
    ("phi4_mini", 'functools[{"name": "read_file", "arguments": {"path": "a.py"}}]'),
    ("continue_tool", "```tool\nTOOL_NAME: read_file\nBEGIN_ARG: path\na.py\nEND_ARG\n```"),
    ("spaced_tag", '< tool name="read_file" args>{"path": "a.py"}</tool>'),
    ("gemma4", '<|tool_call>call:read_file{path:<|"|>a.py<|"|>}<tool_call|>'),
    (
        "deepseek_dsml",
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="read_file">\n'
        '<｜DSML｜parameter name="path" string="true">a.py</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>",
    ),
    (
        "deepseek_dsml",
        '<｜DSML｜ calls>\n<｜DSML｜ invoke name="read_file">\n<｜DSML｜ parameter name="path" '
        'string="true">a.py</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>',
    ),
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


@pytest.mark.parametrize(
    ("schema", "raw", "value"),
    [
        ({"type": ["string", "integer"]}, "7", 7),
        ({"type": ["integer", "string"]}, "auto", "auto"),
        ({"type": ["string", "null"]}, "null", None),
        ({"type": ["string", "null"]}, "", ""),
        ({"anyOf": [{"type": "string"}, {"type": "boolean"}]}, "false", False),
        ({"enum": ["7", 8]}, "7", "7"),
        ({"enum": ["7", 8]}, "8", 8),
        ({"const": 7}, "7", 7),
        ({"type": "integer"}, '"123"', 123),
        ({"type": "string"}, "  Beijing  ", "  Beijing  "),
    ],
)
def test_glm_values_are_typed_by_a_union_enum_or_const_as_glm_4_7s_reader_types_them(
    schema: dict[str, Any], raw: str, value: Any
) -> None:
    text = f"<tool_call>inspect<arg_key>value</arg_key><arg_value>{raw}</arg_value></tool_call>"
    tools = {"inspect": {"type": "object", "properties": {"value": schema}}}
    (call,) = parse_text(text, tools).calls
    assert call.arguments == {"value": value}
    assert type(call.arguments["value"]) is type(value)


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


# Aider's SEARCH/REPLACE blocks open with a path line and a fence, so they are read at fences.
AIDER = (
    "mathweb/flask/app.py\n```python\n<<<<<<< SEARCH\nfrom flask import Flask\n=======\n"
    "import math\nfrom flask import Flask\n>>>>>>> REPLACE\n```"
)
AIDER_EDIT = {
    "path": "mathweb/flask/app.py",
    "search": "from flask import Flask\n",
    "replace": "import math\nfrom flask import Flask\n",
}


def _edits(text: str, size: int = 0) -> tuple[list[tuple[str, Any, str]], list[str], str]:
    cuts = list(range(size, len(text), size)) if size else []
    items, content = run_in_chunks(text, cuts)
    calls = [(i.name, i.arguments, i.syntax) for i in items if isinstance(i, ParsedCall)]
    errors = [i.error for i in items if isinstance(i, CallParseError)]
    return calls, errors, content


@pytest.mark.parametrize("size", [0, 1, 2, 5, 16])
def test_an_aider_block_is_an_edit_in_any_chunking(size: int) -> None:
    calls, errors, content = _edits(f"I add the import.\n\n{AIDER}\nThat is all.\n", size)
    assert errors == []
    assert calls == [("edit_file", AIDER_EDIT, "aider")]
    # the path line is prose the person reads; the block itself is taken out
    assert content == "I add the import.\n\nmathweb/flask/app.py\n\nThat is all.\n"


def test_aider_paths_as_models_write_them_and_several_blocks() -> None:
    text = (
        "**src/a.py**\n```\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n\n"
        "<<<<<<< SEARCH\ny = 1\n=======\n>>>>>>> REPLACE\n```\n"
        "And in the same file:\n\n```python\n<<<<<<< SEARCH\nz = 1\r\n=======\nz = 3\r\n"
        ">>>>>>> REPLACE\n```\n"
    )
    calls, errors, _ = _edits(text, 3)
    assert errors == []
    assert [c[1] for c in calls] == [
        {"path": "src/a.py", "search": "x = 1\n", "replace": "x = 2\n"},
        {"path": "src/a.py", "search": "y = 1\n", "replace": ""},
        {"path": "src/a.py", "search": "z = 1\r\n", "replace": "z = 3\r\n"},
    ]


def test_a_path_line_between_aider_blocks_changes_the_file() -> None:
    text = (
        "a.py\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n"
        "b.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```"
    )
    calls, errors, content = _edits(text, 4)
    assert errors == [] and content == "a.py"
    assert [c[1] for c in calls] == [
        {"path": "a.py", "search": "old\n", "replace": "new\n"},
        {"path": "b.py", "search": "x\n", "replace": "y\n"},
    ]


@pytest.mark.parametrize("size", [0, 1, 3, 16])
def test_aider_diff_fenced_form_is_an_edit_in_any_chunking(size: int) -> None:
    # the path as the fence's first line (Aider's `diff-fenced`); words between blocks pass
    text = (
        "Here's the change:\n\n```python\nb.py\n<<<<<<< SEARCH\nold\n=======\nnew\n"
        ">>>>>>> REPLACE\n\n...\n\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n\nDone.\n"
    )
    calls, errors, content = _edits(text, size)
    assert errors == []
    assert [c[1] for c in calls] == [
        {"path": "b.py", "search": "old\n", "replace": "new\n"},
        {"path": "b.py", "search": "x\n", "replace": "y\n"},
    ]
    assert content == "Here's the change:\n\nDone.\n"


@pytest.mark.parametrize("size", [0, 1, 3, 16])
def test_a_path_in_a_fence_of_its_own_names_the_file_of_the_edit_after_it(size: int) -> None:
    # DeepSeek Coder V2 writes the path as a fence's only line; Aider reads it as the file
    text = "Here:\n\n```python\nfoo.txt\n```\n```python\n<<<<<<< SEARCH\none\n=======\ntwo\n"
    text += ">>>>>>> REPLACE\n```\n"
    calls, errors, content = _edits(text, size)
    assert errors == []
    assert [c[1] for c in calls] == [{"path": "foo.txt", "search": "one\n", "replace": "two\n"}]
    assert content == "Here:\n\n```python\nfoo.txt\n```"


def test_a_fence_of_code_before_an_edit_names_no_file() -> None:
    text = "```\nsetup.py\nprint(1)\n```\n```\n<<<<<<< SEARCH\none\n=======\ntwo\n"
    text += ">>>>>>> REPLACE\n```\n"
    calls, errors, _ = _edits(text, 0)
    assert calls == []
    assert len(errors) == 1 and errors[0].startswith("aider: no file path"), errors


@pytest.mark.parametrize(
    "text",
    [
        "```\nsrc/a.py\nprint(1)\n```\n",
        "```python\nimport os\n<<<<<<< SEARCH\n```\n",
        "```\nsrc/a.py\n<<<<<<< SEA",
        "```\n" + "x" * 300 + "\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n",
    ],
)
def test_a_fence_whose_first_line_is_not_a_path_and_head_stays_an_example(text: str) -> None:
    for size in (0, 1, 4, 16):
        calls, errors, content = _edits(text, size)
        assert calls == [] and errors == [] and content == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (AIDER[: len(AIDER) * 2 // 3], "unclosed code fence (SEARCH/REPLACE block)"),
        (
            "a.py\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n```\n",
            "aider: the fence closed before >>>>>>> REPLACE; nothing was run",
        ),
        (
            "a.py\n```\n<<<<<<< SEARCH\nold\n>>>>>>> REPLACE\n```\n",
            "aider: the fence closed before =======",
        ),
        (
            "Here it is:\n\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n",
            "aider: no file path on the line before the fence",
        ),
        (
            "new.py\n```\n<<<<<<< SEARCH\n=======\nprint(1)\n>>>>>>> REPLACE\n```\n",
            "aider: an empty SEARCH section for new.py; write a new file with write_file",
        ),
    ],
)
def test_a_broken_aider_block_is_one_precise_error(text: str, message: str) -> None:
    for size in (0, 1, 7):
        calls, errors, _ = _edits(text, size)
        assert calls == []
        assert len(errors) == 1 and errors[0].startswith(message), errors


def test_aider_blocks_are_prose_without_an_edit_tool_and_in_other_fences() -> None:
    tools = {k: v for k, v in TOOLS.items() if k != "edit_file"}
    result = parse_text(AIDER, tools)
    assert result.calls == [] and result.errors == [] and result.content == AIDER
    shown = "````\n" + AIDER + "\n````"  # a longer fence around it shows the format
    result = parse_text(shown, TOOLS)
    assert result.calls == [] and result.errors == [] and result.content == shown


def test_a_number_written_with_leading_zeros_in_a_python_call_is_that_number() -> None:
    # LFM2 writes dates as `month=07`, which Python 3 does not parse; inside a string it stays
    tools = {
        "set_date": {
            "type": "object",
            "properties": {"month": {"type": "integer"}, "note": {"type": "string"}},
        }
    }
    text = '<|tool_call_start|>[set_date(month=07, note="007")]<|tool_call_end|>'
    result = parse_text(text, tools)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("set_date", {"month": 7, "note": "007"})
    ]


def _items(text: str, tools: dict[str, Any], size: int = 0) -> tuple[list[Any], str]:
    return run_in_chunks(text, list(range(size, len(text), size)) if size else [], tools)


GEMMA_TOOLS: dict[str, Any] = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    },
    "note": {"type": "object", "properties": {}},
}


@pytest.mark.parametrize("size", [0, 1, 3, 16])
def test_gemma4_values_nest_and_keep_their_text(size: int) -> None:
    text = (
        'Checking.<|tool_call>call:note{title:<|"|>a, b: {c}<|"|>, n:-3, f:1.5e3, ok:true, '
        'none:null, tags:[<|"|>x]<|"|>,2,{k:<|"|>v<|"|>}], meta:{deep:{z:false}}}<tool_call|>Done.'
    )
    items, content = _items(text, GEMMA_TOOLS, size)
    assert [(i.name, i.arguments, i.syntax) for i in items] == [
        (
            "note",
            {
                "title": "a, b: {c}",
                "n": -3,
                "f": 1500.0,
                "ok": True,
                "none": None,
                "tags": ["x]", 2, {"k": "v"}],
                "meta": {"deep": {"z": False}},
            },
            "gemma4",
        )
    ]
    assert content == "Checking.Done."


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        # typed by the schema: a number written as a string, a string written bare
        ('<|tool_call>call:get_weather{city:Paris, days:<|"|>3<|"|>}<tool_call|>', None),
        # the opening delimiter left out (Gemma 4 does this): the string runs to the closing one
        ('<|tool_call>call:get_weather{city:Paris, France<|"|>,days:3}<tool_call|>', "France"),
        # `<turn|>` in place of `<tool_call|>`, and the output's end where servers strip it
        ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<turn|>', None),
        ('<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}', None),
        ('<|channel>thought\nhm<channel|>call:get_weather{city:<|"|>Paris<|"|>,days:3}', None),
        ('call:get_weather{city:<|"|>Paris<|"|>,days:3}\n', None),
    ],
)
def test_gemma4_as_its_own_parsers_read_it(text: str, arguments: str | None) -> None:
    city = "Paris, France" if arguments else "Paris"
    for size in (0, 1, 5, 16):
        items, _ = _items(text, GEMMA_TOOLS, size)
        assert [(i.name, i.arguments) for i in items] == [
            ("get_weather", {"city": city, "days": 3})
        ], size


@pytest.mark.parametrize(
    "text",
    [
        'call:unknown{city:<|"|>Paris<|"|>}\n',  # not a registered tool: prose
        'call:get_weather{city:<|"|>Paris<|"|>} and more on the line',
        'recall:get_weather{city:<|"|>Paris<|"|>}',
        'See `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>`.',
    ],
)
def test_gemma4_forms_that_are_prose(text: str) -> None:
    for size in (0, 1, 7):
        items, content = _items(text, GEMMA_TOOLS, size)
        assert items == [] and content == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('<|tool_call>call:get_weather{city:<|"|>Paris', "a string at character"),
        ("<|tool_call>call:get_weather{city:Paris", "the output ended before its closing }"),
        ("<|tool_call>get_weather{city:1}<tool_call|>", "expected call:NAME{…}"),
        ("<|tool_call>call:get_weather{city:1} trailing<tool_call|>", "unexpected text after"),
        ('call:get_weather{city:<|"|>Paris', "unclosed call:get_weather{"),
    ],
)
def test_a_broken_gemma4_call_is_one_error_never_a_call(text: str, message: str) -> None:
    for size in (0, 1, 7):
        items, _ = _items(text, GEMMA_TOOLS, size)
        assert len(items) == 1 and isinstance(items[0], CallParseError), items
        assert message in items[0].error and "<|tool_call>call:NAME{" in items[0].error


DSML = "｜DSML｜"
DSML_TOOLS: dict[str, Any] = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    },
    "note": {"type": "object", "properties": {}},
}


def _invoke(name: str, *params: tuple[str, str, str], space: str = "") -> str:
    body = "".join(
        f'<{DSML}{space}parameter name="{k}" string="{s}">{v}</{DSML}{space}parameter>\n'
        for k, s, v in params
    )
    return f'<{DSML}{space}invoke name="{name}">\n{body}</{DSML}{space}invoke>\n'


def test_each_dsml_call_is_emitted_the_moment_its_invoke_closes() -> None:
    parser = StreamingCallParser(DSML_TOOLS)
    first = _invoke("get_weather", ("city", "true", "Paris"))
    assert parser.feed(f"Let me look.\n\n<{DSML}tool_calls>\n") == []
    assert parser.feed(first[:-12]) == []
    (call,) = parser.feed(first[-12:])  # `</｜DSML｜invoke>` completes the first call
    assert (call.name, call.arguments, call.syntax) == ("get_weather", {"city": "Paris"}, NAME)
    (second,) = parser.feed(_invoke("note", ("text", "true", "hi")))
    assert second.arguments == {"text": "hi"}
    assert parser.feed(f"</{DSML}tool_calls>") + parser.finish() == []
    assert parser.content == "Let me look."


@pytest.mark.parametrize("size", [0, 1, 4, 16])
def test_dsml_values_are_typed_by_string_or_by_the_schema(size: int) -> None:
    text = (
        f"<{DSML}function_calls>\n"
        + _invoke(
            "note",
            ("text", "true", "  kept as written  "),
            ("count", "false", "42"),
            ("items", "false", '[1, {"a": null}]'),
            ("prose", "false", "not JSON"),
        )
        + _invoke("get_weather", ("city", "false", "Paris"), ("days", "true", "3"))
        + _invoke("get_weather", ("arguments", "false", '{"city": "Rome"}'))
        + f'<{DSML}invoke name="get_weather">\n{{"city": "Oslo", "days": 2}}\n</{DSML}invoke>\n'
        + f"</{DSML}function_calls>"
    )
    items, content = _items(text, DSML_TOOLS, size)
    assert [(i.name, i.arguments) for i in items] == [
        (
            "note",
            {
                "text": "  kept as written  ",
                "count": 42,
                "items": [1, {"a": None}],
                "prose": "not JSON",
            },
        ),
        ("get_weather", {"city": "Paris", "days": 3}),
        ("get_weather", {"city": "Rome"}),  # the `arguments` wrapper DeepSeek's parsers unwrap
        ("get_weather", {"city": "Oslo", "days": 2}),
    ]
    assert content == ""


@pytest.mark.parametrize("size", [0, 1, 5, 16])
def test_dsml_invokes_without_their_block_run_and_take_a_stray_closing_tag(size: int) -> None:
    text = (
        "Checking.\n" + _invoke("get_weather", ("city", "true", "SF")) + f"</{DSML}tool_calls>\nok"
    )
    items, content = _items(text, DSML_TOOLS, size)
    assert [(i.name, i.arguments) for i in items] == [("get_weather", {"city": "SF"})]
    assert content == "Checking.\n\nok"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            f"<{DSML}tool_calls>\n" + _invoke("get_weather", ("city", "true", "SF"))[:-20],
            f'unclosed <{DSML}invoke name="get_weather">: the output ended before',
        ),
        (f"<{DSML}tool_calls>\nsome words\n</{DSML}tool_calls>", "deepseek_dsml: unexpected text"),
        (f"<{DSML}tool_calls></{DSML}tool_calls>", "deepseek_dsml: no invoke inside"),
        (
            f"<{DSML}tool_calls>\n"
            + f'<{DSML}invoke name="get_weather">\nstray\n</{DSML}invoke>\n</{DSML}tool_calls>',
            "deepseek_dsml: unexpected text inside",
        ),
    ],
)
def test_a_broken_dsml_block_is_one_error_never_a_call(text: str, message: str) -> None:
    for size in (0, 1, 7):
        items, _ = _items(text, DSML_TOOLS, size)
        assert len(items) == 1 and isinstance(items[0], CallParseError), items
        assert items[0].error.startswith(message), items[0].error


def test_a_dsml_block_whose_closing_tag_never_came_keeps_the_calls_that_closed() -> None:
    # every invoke closed and ran; only the block's own end is missing: no error to report
    text = f"<{DSML}tool_calls>\n" + _invoke("get_weather", ("city", "true", "SF"))
    result = parse_text(text, DSML_TOOLS)
    assert [c.arguments for c in result.calls] == [{"city": "SF"}] and result.errors == []


@pytest.mark.parametrize("size", [0, 1, 2, 16])
def test_glm_values_keep_their_whitespace_as_glm47s_parser_keeps_it(size: int) -> None:
    tools = {"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}}}
    text = (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>  Beijing  </arg_value>"
        "</tool_call>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>\n Oslo\t\n"
        "</arg_value>\n</tool_call>"
    )
    items, _ = _items(text, tools, size)
    assert [(i.arguments, i.syntax) for i in items] == [
        ({"city": "  Beijing  "}, "glm"),
        ({"city": "\n Oslo\t\n"}, "glm"),
    ]
