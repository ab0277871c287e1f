"""What the text protocol reads out of an answer: calls, errors, and the whole result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EXCERPT_CHARS = 500


@dataclass(frozen=True)
class ParsedCall:
    """One call recognised in the model's text."""

    name: str
    arguments: dict[str, Any]
    syntax: str
    deprecated_syntax: bool
    raw_excerpt: str


@dataclass(frozen=True)
class CallParseError:
    """Something written as a call that cannot be run; the model is told why."""

    error: str
    raw_excerpt: str


Item = ParsedCall | CallParseError


@dataclass(frozen=True)
class ParseResult:
    """Everything found in one whole answer."""

    calls: list[ParsedCall] = field(default_factory=list)
    content: str = ""
    errors: list[CallParseError] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape printed by `toolgate calls parse`."""
        return {
            "calls": [
                {
                    "name": c.name,
                    "arguments": c.arguments,
                    "syntax": c.syntax,
                    "deprecated_syntax": c.deprecated_syntax,
                }
                for c in self.calls
            ],
            "content": self.content,
            "errors": [{"error": e.error, "raw_excerpt": e.raw_excerpt} for e in self.errors],
        }


def excerpt(text: str) -> str:
    """Cap a call's source text for errors and logs."""
    if len(text) <= EXCERPT_CHARS:
        return text
    return text[:340] + " … " + text[-150:]
