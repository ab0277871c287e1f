"""`toolgate calls parse`: model text on stdin in, the parser's JSON out."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolgate.calls.parser import read_whole
from toolgate.calls.reading import ReadingSettings, parser_for


def default_tool_schemas() -> dict[str, dict[str, Any]]:
    """Tool name → argument schema of the built-in tools."""
    # Imported here: the text protocol sits below the tools and must load without them.
    from toolgate.tools.builtins import builtin_registry

    return builtin_registry().argument_schemas()


def schemas_from_tools(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tool name → argument schema from an OpenAI-style tools list (or bare tool objects)."""
    out: dict[str, dict[str, Any]] = {}
    for entry in tools:
        if not isinstance(entry, Mapping):
            raise ValueError("each tool must be a JSON object")
        fn = entry.get("function", entry)
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise ValueError("each tool needs a name")
        params = fn.get("parameters", fn.get("input_schema", {"type": "object"}))
        out[fn["name"]] = dict(params) if isinstance(params, Mapping) else {"type": "object"}
    return out


def load_tools_file(path: str) -> dict[str, dict[str, Any]]:
    """Read a schemas.json: an OpenAI tools list, or {"tools": [...]}."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(doc, Mapping):
        doc = doc.get("tools")
    if not isinstance(doc, list):
        raise ValueError('expected a list of tools or {"tools": [...]}')
    return schemas_from_tools(doc)


def calls_parse_main(
    stdin_text: str, tools_file: str | None, settings: ReadingSettings
) -> tuple[dict[str, Any], int]:
    """The JSON for `toolgate calls parse`, and the exit code (2 when the tools file is bad).

    `settings` are the config's `tool_calling`: the text is read exactly as a run reads it.
    """
    try:
        tools = load_tools_file(tools_file) if tools_file else default_tool_schemas()
    except (OSError, ValueError) as exc:
        return {"error": f"cannot read tools file {tools_file}: {exc}"}, 2
    return read_whole(parser_for(tools, settings), stdin_text).to_json(), 0
