"""A tool is an interface: a name, a description and JSON Schemas for its arguments and output."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

REASONING_FIELD = "_reasoningForCall"
_REASONING_SCHEMA = {
    "type": "string",
    "description": "One short sentence: why you make this call. Shown to the person reviewing it.",
}


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments: these properties, these required, no others."""
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class Tool:
    """What the model sees of a tool."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    output: dict[str, Any] | None = None
    # How the gate treats the tool by default: "read" runs at once, "change" and "command" ask.
    kind: str = "read"
    # Whether calling it runs a program (git, tests, commands): refused in untrusted workspaces.
    executes: bool = False
    # A default decision the tool declares itself (a tool.yaml's `gate`); config approvals win.
    gate: str | None = None
    # What the tool can do, as `domain.action` names (the capability registry reads them).
    capabilities: tuple[str, ...] = ()
    # Declared to change nothing (an MCP server's readOnlyHint): it may run beside other reads
    # of a turn. Only concurrency reads this; the gate's decision still comes from `kind`.
    read_only: bool = False

    @property
    def summary(self) -> str:
        """The first line of the description."""
        return self.description.strip().splitlines()[0] if self.description.strip() else self.name

    def model_parameters(self) -> dict[str, Any]:
        """The argument schema sent to the model: the tool's own plus `_reasoningForCall`."""
        params = copy.deepcopy(self.parameters)
        params.setdefault("type", "object")
        params.setdefault("properties", {})[REASONING_FIELD] = dict(_REASONING_SCHEMA)
        return params

    def composed(self, activity: str | None) -> dict[str, Any]:
        """The schema document with the meta-fields `_tool`, `_activity` and `_output`."""
        return {
            "_tool": self.name,
            "_activity": activity or "",
            "_output": self.output,
            "name": self.name,
            "description": self.description,
            "parameters": self.model_parameters(),
        }

    def openai(self) -> dict[str, Any]:
        """The entry of an OpenAI `tools=[…]` list."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.model_parameters(),
            },
        }
