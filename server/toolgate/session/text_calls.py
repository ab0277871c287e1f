"""Model text read as a run reads it: the calls the text protocol finds in it.

`toolgate calls parse` shows what a run would make of an answer: the same parser, with the
same `tool_calling` settings (the workspace's syntax modules among them) and by default the
built-in tools' argument schemas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolgate.calls.parser import read_whole
from toolgate.calls.reading import ReadingSettings, parser_for
from toolgate.tools.builtins import builtin_registry


def builtin_tool_schemas() -> dict[str, dict[str, Any]]:
    """Tool name → argument schema of the built-in tools."""
    return builtin_registry().argument_schemas()


def read_calls(
    text: str, tools: Mapping[str, Mapping[str, Any]], settings: ReadingSettings
) -> dict[str, Any]:
    """What the parser a run uses finds in `text`, as JSON: the calls, the prose, the errors."""
    return read_whole(parser_for(tools, settings), text).to_json()
