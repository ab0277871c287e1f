"""The port through which what a workspace brings speaks before and after each call.

The gate asks it once the policy has decided (a hook may refuse, ask, or say yes to what the
policy would ask about, never let through what the policy denies) and again once the call has
its result (a hook's word, or the rules for the files the call touched, reach the model with
that result). The session service implements it from the workspace's hooks, rules and skills
(`session/customization.py`); the engine only knows this shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from toolgate.records import ToolCall, ToolResult
from toolgate.tools.schema import Tool


@dataclass(frozen=True)
class Verdict:
    """What the hooks said before a call: `deny`, `ask`, `allow` or nothing."""

    decision: str | None = None
    reason: str = ""


NO_SAY = Verdict()


class CallHooks(Protocol):
    """Before and after each call the gate handles."""

    async def before(self, call: ToolCall, tool: Tool, args: dict[str, Any]) -> Verdict:
        """Whether the call may go on (the policy's deny stands whatever this says)."""
        ...

    async def after(
        self, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult
    ) -> list[str]:
        """Notes for the model to read with the result."""
        ...
