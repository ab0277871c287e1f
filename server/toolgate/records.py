"""The nouns every layer shares: tool calls and their results."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ToolCall:
    """One call the model asked for, native or parsed out of its text."""

    id: str
    name: str
    arguments: dict[str, Any]
    syntax: str = "native"
    deprecated_syntax: bool = False
    raw_excerpt: str = ""
    reasoning: str = ""


@dataclass
class ToolResult:
    """What a tool gives back; a refusal or failure is a result too, never an exception."""

    success: bool
    data: Any = None
    error: str | None = None
    suggestions: list[str] = field(default_factory=list)
    duration_seconds: float = 0.0
    output_truncated: bool = False
    output_size_bytes: int = 0
    # What the project says about this call, for the model: the rules for the files it touched,
    # a hook's word (docs/CUSTOMIZE.md).
    notes: list[str] = field(default_factory=list)

    @classmethod
    def ok(cls, data: Any = None, **kw: Any) -> ToolResult:
        """A successful result."""
        return cls(success=True, data=data, **kw)

    @classmethod
    def fail(cls, error: str, *, suggestions: list[str] | None = None, **kw: Any) -> ToolResult:
        """A failed or refused call, with what the model can do instead."""
        return cls(success=False, error=error, suggestions=list(suggestions or []), **kw)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape sent to the model and written to the run log."""
        shape = asdict(self)
        if not self.notes:
            del shape["notes"]  # most results have none: the shape stays as it always was
        return shape
