"""The one place that decides how a run reads calls from text, for the engine and the CLI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from toolgate.calls.parser import StreamingCallParser
from toolgate.calls.syntaxes import configured


class ReadingSettings(Protocol):
    """The settings of `tool_calling` that change what is read (see `toolgate.config`)."""

    allow_deprecated_syntax: bool

    @property
    def syntax_modules(self) -> Sequence[str]:
        """Modules (or `module:Class`) whose syntaxes are read besides the built-in ones."""
        ...


def parser_for(
    tools: Mapping[str, Mapping[str, Any]], settings: ReadingSettings
) -> StreamingCallParser:
    """The parser a run uses with these settings; `toolgate calls parse` uses the same."""
    return StreamingCallParser(
        tools,
        allow_deprecated_syntax=settings.allow_deprecated_syntax,
        syntaxes=configured(settings.syntax_modules),
    )
