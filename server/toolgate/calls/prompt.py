"""Prompt scaffolding for text mode: the tools section, the instructions, results, corrections."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolgate.calls.arguments import EXPECTED
from toolgate.calls.records import CallParseError
from toolgate.calls.writing import WRITERS


def _function(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    fn = tool.get("function", tool)
    return fn if isinstance(fn, Mapping) else {}


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False)


def tools_section(tools: Sequence[Mapping[str, Any]]) -> str:
    """The TOOLS: … END TOOLS block listing each tool's name, description and argument schema."""
    lines = ["TOOLS:"]
    for tool in tools:
        fn = _function(tool)
        lines.append(f"- name: {fn.get('name', '')}")
        lines.append(f"  description: {_one_line(fn.get('description'))}")
        lines.append(f"  schema: {_compact(fn.get('parameters', {'type': 'object'}))}")
    lines.append("END TOOLS")
    return "\n".join(lines)


_SAMPLE_STRINGS = {
    "path": "app.py",
    "content": "print('hello')\n",
    "message": "Fix the greeting",
    "search": "old line",
    "replace": "new line",
    "pattern": "def main",
    "command": "pytest -q",
    "answer": "Done.",
}


def _sample(name: str, schema: Mapping[str, Any]) -> Any:
    """A plausible value for one argument, so each tool gets a concrete example call."""
    kind = schema.get("type")
    if "default" in schema:
        return schema["default"]
    if kind == "array":
        items = schema.get("items", {})
        return [_sample(name.rstrip("s"), items if isinstance(items, Mapping) else {})]
    if kind == "integer" or kind == "number":
        return 1
    if kind == "boolean":
        return True
    if kind == "object":
        return {}
    return _SAMPLE_STRINGS.get(name, "app.py" if "path" in name or "file" in name else "text")


def example_call(tool: Mapping[str, Any], syntax: str = "tag") -> str:
    """One concrete call of a tool in `syntax` (by default the canonical tag), from its schema."""
    fn = _function(tool)
    params = fn.get("parameters") or {}
    props = params.get("properties") or {}
    required = [r for r in params.get("required") or [] if r in props]
    args = {key: _sample(key, props[key]) for key in required}
    return WRITERS[syntax].write(str(fn.get("name", "")), args)


def text_mode_instructions(tools: Sequence[Mapping[str, Any]], syntax: str = "tag") -> str:
    """The system-prompt text for a model that calls tools by writing them in its answer.

    `syntax` is the format the prompt asks for (`tool_calling.text_syntax`, one of
    `PROMPT_SYNTAXES`); the parser reads every syntax all the same.
    """
    if syntax not in WRITERS:
        raise ValueError(f"unknown text syntax {syntax!r}; one of: {', '.join(WRITERS)}")
    # Small local models copy what they are shown: one concrete example per tool, with bare
    # file names, is what makes them write calls that parse.
    examples = [example_call(t, syntax) for t in tools]
    if syntax == "tag":
        how = "To call a tool, write a tag with its name and its arguments as one JSON object:"
        one, several, code, done = "tag", "tags", "a tag", "no tool tag"
        match = "the JSON must match"
    else:
        how = "To call a tool, write the call in this form:"
        one, several, code, done = "call", "calls", "a call", "no tool call"
        match = "the arguments must match"
    form = WRITERS[syntax]
    return "\n".join(
        [
            tools_section(tools),
            "",
            form.how or how,
            form.shape,
            "Examples:",
            *examples,
            "Rules:",
            *(f"- {note}" for note in form.notes),
            f"- One call per {one}; {match} the tool's schema.",
            f"- You may write several {several} in one answer; they run in order.",
            f"- After your {several}, stop and wait: each result comes back in a "
            '<tool_result name="NAME" success="true|false"> block.',
            f"- Do not put {code} in a code block unless it is only an example.",
            f"- When the task is done, answer in plain prose with {done}.",
        ]
    )


def _signature(tool: Mapping[str, Any]) -> str:
    fn = _function(tool)
    params = fn.get("parameters") or {}
    props = {k: v for k, v in (params.get("properties") or {}).items() if not k.startswith("_")}
    required = [k for k in params.get("required") or [] if k in props]
    parts = list(required)
    for key, schema in props.items():
        if key not in required:
            default = schema.get("default") if isinstance(schema, Mapping) else None
            parts.append(f"{key}={json.dumps(default)}" if default is not None else f"{key}?")
    return f"{fn.get('name', '')}({', '.join(parts)})"


def compact_instructions(tools: Sequence[Mapping[str, Any]]) -> str:
    """A short form of the text-mode instructions, for small local models.

    Small models lose the thread in long JSON schemas; a signature per tool and one concrete
    example each is what they follow (measured on Qwen2.5-Coder-0.5B, see LOCAL_MODEL.md).
    """
    lines = ["You can use these tools:"]
    for tool in tools:
        lines.append(f"- {_signature(tool)}: {_one_line(_function(tool).get('description'))}")
    lines += [
        "",
        "To use a tool, reply with one tool block and nothing after it. Examples:",
        *[example_call(t) for t in tools],
        "Paths are relative to the project folder. The system runs each tool block and replies "
        "with the result. When the task is done, answer in plain text without any tool block.",
    ]
    return "\n".join(lines)


def _escape_block(text: str) -> str:
    # "</" only occurs inside JSON strings, where "<\/" means the same: the block can't be closed.
    return text.replace("</", "<\\/")


def format_tool_result(name: str, result: Mapping[str, Any]) -> str:
    """A tool result as the text block the model reads in text mode."""
    success = bool(result.get("success"))
    if success:
        payload: Any = result.get("data")
    else:
        payload = {"error": result.get("error") or "failed"}
        if result.get("suggestions"):
            payload["suggestions"] = list(result["suggestions"])
    extra: dict[str, Any] = {}
    if result.get("output_truncated"):
        extra["output_truncated"] = True
    if result.get("notes"):  # rules for the files touched, hooks' words, how to read the rest
        extra["notes"] = list(result["notes"])
    if extra:
        payload = {"result": payload, **extra}
    body = _escape_block(json.dumps(payload, ensure_ascii=False, default=str))
    attr = html.escape(name, quote=True)
    flag = "true" if success else "false"
    return f'<tool_result name="{attr}" success="{flag}">{body}</tool_result>'


def corrective_message(errors: Sequence[CallParseError]) -> str:
    """One message that names each call that could not be read and the syntax expected."""
    if not errors:
        return ""
    lines = [
        f"{len(errors)} of your tool calls could not be read, so nothing was run for them:"
        if len(errors) > 1
        else "One of your tool calls could not be read, so nothing was run for it:"
    ]
    for i, err in enumerate(errors, 1):
        snippet = " ".join(err.raw_excerpt.split())
        if len(snippet) > 120:
            snippet = snippet[:117] + "..."
        lines.append(f"{i}. {err.error}")
        if snippet:
            lines.append(f"   you wrote: {snippet}")
    lines.append(f"Write each call as {EXPECTED}, with valid JSON, one call per tag.")
    return "\n".join(lines)
