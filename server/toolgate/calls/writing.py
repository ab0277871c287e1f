"""How the prompt shows a call in each syntax it may ask for (`tool_calling.text_syntax`).

The parser reads every syntax whatever the prompt asks for; asking for the format a model
was trained on (`hermes` for Qwen 2.5, `qwen_xml` for Qwen3-Coder, …) makes it write calls
that parse more often than teaching it a new one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

Writer = Callable[[str, Mapping[str, Any]], str]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _xml_value(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _py(value: Any) -> str:
    return repr(value) if not isinstance(value, bool | type(None)) else _json(value)


# name → (how a call opens, a writer of one call); the opening line is what the prompt teaches
WRITERS: dict[str, tuple[str, Writer]] = {
    "tag": (
        '<tool name="NAME" args>{ JSON arguments }</tool>',
        lambda name, args: f'<tool name="{name}" args>{_json(args)}</tool>',
    ),
    "hermes": (
        '<tool_call>{"name": NAME, "arguments": { JSON arguments }}</tool_call>',
        lambda name, args: f"<tool_call>{_json({'name': name, 'arguments': args})}</tool_call>",
    ),
    "qwen_xml": (
        "<function=NAME><parameter=ARGUMENT>value</parameter></function>",
        lambda name, args: (
            f"<function={name}>"
            + "".join(f"<parameter={k}>{_xml_value(v)}</parameter>" for k, v in args.items())
            + "</function>"
        ),
    ),
    "mistral": (
        '[TOOL_CALLS][{"name": NAME, "arguments": { JSON arguments }}]',
        lambda name, args: f"[TOOL_CALLS]{_json([{'name': name, 'arguments': args}])}",
    ),
    "llama_json": (
        '{"name": NAME, "parameters": { JSON arguments }} alone on its line',
        lambda name, args: _json({"name": name, "parameters": args}),
    ),
    "pythonic": (
        "[NAME(argument=value, …)] alone on its line",
        lambda name, args: f"[{name}({', '.join(f'{k}={_py(v)}' for k, v in args.items())})]",
    ),
    "glm": (
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
    "deepseek": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{ JSON arguments }"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        lambda name, args: (
            f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{name}<｜tool▁sep｜>"
            f"{_json(args)}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
    ),
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0"
        "<|tool_call_argument_begin|>{ JSON arguments }<|tool_call_end|>"
        "<|tool_calls_section_end|>",
        lambda name, args: (
            f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0"
            f"<|tool_call_argument_begin|>{_json(args)}<|tool_call_end|><|tool_calls_section_end|>"
        ),
    ),
}

PROMPT_SYNTAXES = tuple(WRITERS)
