"""How the prompt shows a call in each syntax it may ask for (`tool_calling.text_syntax`).

The parser reads every syntax whatever the prompt asks for; asking for the format a model
was trained on (`hermes` for Qwen 2.5, `qwen_xml` for Qwen3-Coder, …) makes it write calls
that parse more often than teaching it a new one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

Writer = Callable[[str, Mapping[str, Any]], str]


class Form(NamedTuple):
    """A call format the prompt may ask for: its shape, a writer of one call, and its wording.

    `how` replaces the generic line that introduces the shape, and `notes` are rules added to
    the generic ones: a family trained on its own instructions follows that wording best.
    """

    shape: str
    write: Writer
    how: str = ""
    notes: tuple[str, ...] = ()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _xml_value(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _py(value: Any) -> str:
    return repr(value) if not isinstance(value, bool | type(None)) else _json(value)


def _gemma(value: Any) -> str:
    """A value as Gemma 4 writes it: strings between `<|"|>`, bare keys, JSON's other values."""
    if isinstance(value, str):
        return f'<|"|>{value}<|"|>'
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{_gemma(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_gemma(v) for v in value) + "]"
    return _json(value)


def _dsml(name: str, args: Mapping[str, Any]) -> str:
    """One call in a DSML block, one parameter per line, as DeepSeek's chat template writes it."""
    params = "".join(
        f'<｜DSML｜parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">'
        f"{_xml_value(v)}</｜DSML｜parameter>\n"
        for k, v in args.items()
    )
    return (
        f'<｜DSML｜function_calls>\n<｜DSML｜invoke name="{name}">\n{params}'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )


# name → the form; its shape is what the prompt teaches
WRITERS: dict[str, Form] = {
    "tag": Form(
        '<tool name="NAME" args>{ JSON arguments }</tool>',
        lambda name, args: f'<tool name="{name}" args>{_json(args)}</tool>',
    ),
    "hermes": Form(
        '<tool_call>{"name": NAME, "arguments": { JSON arguments }}</tool_call>',
        lambda name, args: f"<tool_call>{_json({'name': name, 'arguments': args})}</tool_call>",
    ),
    "qwen_xml": Form(
        "<function=NAME><parameter=ARGUMENT>value</parameter></function>",
        lambda name, args: (
            f"<function={name}>"
            + "".join(f"<parameter={k}>{_xml_value(v)}</parameter>" for k, v in args.items())
            + "</function>"
        ),
    ),
    "mistral": Form(
        '[TOOL_CALLS][{"name": NAME, "arguments": { JSON arguments }}]',
        lambda name, args: f"[TOOL_CALLS]{_json([{'name': name, 'arguments': args}])}",
    ),
    "llama_json": Form(
        '{"name": NAME, "parameters": { JSON arguments }} alone on its line',
        lambda name, args: _json({"name": name, "parameters": args}),
    ),
    "pythonic": Form(
        "[NAME(argument=value, …)] alone on its line",
        lambda name, args: f"[{name}({', '.join(f'{k}={_py(v)}' for k, v in args.items())})]",
    ),
    "glm": Form(
        "<tool_call>NAME<arg_key>ARGUMENT</arg_key><arg_value>value</arg_value></tool_call>",
        lambda name, args: (
            f"<tool_call>{name}"
            + "".join(
                f"<arg_key>{k}</arg_key><arg_value>{_xml_value(v)}</arg_value>"
                for k, v in args.items()
            )
            + "</tool_call>"
        ),
    ),
    "deepseek": Form(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{ JSON arguments }"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        lambda name, args: (
            f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{name}<｜tool▁sep｜>"
            f"{_json(args)}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
    ),
    "kimi_k2": Form(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0"
        "<|tool_call_argument_begin|>{ JSON arguments }<|tool_call_end|>"
        "<|tool_calls_section_end|>",
        lambda name, args: (
            f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0"
            f"<|tool_call_argument_begin|>{_json(args)}<|tool_call_end|><|tool_calls_section_end|>"
        ),
    ),
    "gemma4": Form(
        '<|tool_call>call:NAME{ARGUMENT:<|"|>text<|"|>,OTHER_ARGUMENT:3}<tool_call|>',
        lambda name, args: f"<|tool_call>call:{name}{_gemma(dict(args))}<tool_call|>",
        notes=(
            'Write strings between <|"|> and <|"|>, and numbers, true, false and null bare; '
            "keys take no quotes; objects are {key:value,…} and lists [value,…].",
        ),
    ),
    "deepseek_dsml": Form(
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="$FUNCTION_NAME">\n'
        '<｜DSML｜parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE'
        "</｜DSML｜parameter>\n...\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        _dsml,
        how=(
            'You can invoke functions by writing a "<｜DSML｜function_calls>" block like the '
            "following as part of your reply to the user:"
        ),
        notes=(
            "String and scalar parameters should be specified as is without any escaping or "
            'quotes, while lists and objects should use JSON format. The "string" attribute '
            'should be set to "true" for string type parameters and "false" for other types '
            "(numbers, booleans, arrays, objects).",
        ),
    ),
}

PROMPT_SYNTAXES = tuple(WRITERS)
