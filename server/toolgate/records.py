"""The nouns every layer shares: tool calls, their results, and the ids things are known by."""

from __future__ import annotations

import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

IdKind = Literal[
    "session",
    "run",
    "undo",
    "plan",
    "proposal",
    "workflow",
    "tests",
    "review",
    "loop",
    "fix",
    "mcp",
    "rewind",
]
# One prefix per kind, so that an id alone says what it names: a run log, a checkpoint, a kept
# plan or a proposal is never mistaken for another (`p-` once meant a plan and a proposal).
ID_PREFIXES: dict[IdKind, str] = {
    "session": "s",  # a conversation, .toolgate/sessions/<id>.jsonl
    "run": "r",  # an agent run: one turn of a session
    "undo": "u",  # an undo: a run of its own, with a checkpoint, so it can be undone
    "plan": "p",  # a plan kept in .toolgate/plans/<id>.json
    "proposal": "prop",  # a gated file change waiting for the person
    "workflow": "w",  # a plan or saved workflow run step by step through the gate
    "tests": "tests",  # a test run asked for outside a model's turn
    "review": "review",  # the agent tool review_code's run log
    "loop": "loop",  # a review loop's own log
    "fix": "fix",  # a review comment's suggestion turned into a proposal
    "mcp": "mcp",  # the gated calls another agent makes through `toolgate mcp`
    "rewind": "rw",  # a session taken back to one of its turns (`session/rewind.py`)
}


def new_id(kind: IdKind) -> str:
    """A fresh id of `kind`: its prefix, the UTC time to the second, and six random hex digits.

    Ids of one kind sort by the time they were made, and two processes never make the same one.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{ID_PREFIXES[kind]}-{stamp}-{secrets.token_hex(3)}"


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
