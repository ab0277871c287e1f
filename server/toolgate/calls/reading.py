"""The one place that decides how a run reads calls from text, for the engine and the CLI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from toolgate.calls.parser import StreamingCallParser


class ReadingSettings(Protocol):
    """The settings of `tool_calling` that change what is read (see `toolgate.config`)."""

    allow_deprecated_syntax: bool


def parser_for(
    tools: Mapping[str, Mapping[str, Any]], settings: ReadingSettings
) -> StreamingCallParser:
    """The parser a run uses with these settings; `toolgate calls parse` uses the same."""
    return StreamingCallParser(tools, allow_deprecated_syntax=settings.allow_deprecated_syntax)
