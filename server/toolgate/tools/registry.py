"""Two registries: tools (what the model may call) and activities (what runs them)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolgate.records import ToolResult
from toolgate.tools.schema import REASONING_FIELD, Tool
from toolgate.workspace.files import atomic_write_text

if TYPE_CHECKING:
    from toolgate.tools.activity import Activity

# How a latent tool is answered: the agent's context of the answer (`agent.latent`), the
# arguments. The registry only keeps it for the gate, so it names no type from above.
Answerer = Callable[[Any, dict[str, Any]], Awaitable[ToolResult]]


@lru_cache(maxsize=512)
def _schema_problem(schema: str) -> str | None:
    """Why a tool's JSON Schema (as canonical JSON) is invalid, or None.

    Remembered: every run registers the same built-in tools, and checking a schema against the
    metaschema takes milliseconds each time.
    """
    try:
        Draft202012Validator.check_schema(json.loads(schema))
    except SchemaError as exc:
        return str(exc.message)
    return None


class ToolRegistry:
    """Tools by name, and the activities registered under the same names."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._activities: dict[str, Activity] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        self._answerers: dict[str, Answerer] = {}

    def add(self, tool: Tool, activity: Activity | None = None) -> None:
        """Register a tool, and optionally the activity that runs it."""
        problem = _schema_problem(json.dumps(tool.parameters, sort_keys=True))
        if problem is not None:
            raise ValueError(f"tool {tool.name!r} has an invalid schema: {problem}")
        self._tools[tool.name] = tool
        self._validators[tool.name] = Draft202012Validator(tool.model_parameters())
        if activity is not None:
            self._activities[tool.name] = activity

    def add_latent(self, tool: Tool, answerer: Answerer) -> None:
        """Register a latent tool (no activity) with what answers it in a run.

        The answerer asks the model against `tool.output` (`toolgate.agent.latent`).
        """
        self.add(tool)
        self._activities.pop(tool.name, None)
        self._answerers[tool.name] = answerer

    def answerer(self, name: str) -> Answerer | None:
        """What answers a latent tool in a run; None for other tools and unanswered ones."""
        return self._answerers.get(name)

    def set_activity(self, name: str, activity: Activity) -> None:
        """Swap the code behind a tool without touching its interface."""
        if name not in self._tools:
            raise KeyError(f"no tool named {name!r}")
        self._activities[name] = activity

    def remove(self, name: str) -> None:
        """Forget a tool and its activity."""
        self._tools.pop(name, None)
        self._activities.pop(name, None)
        self._validators.pop(name, None)
        self._answerers.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def names(self) -> list[str]:
        """Names of every registered tool."""
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        """The tool of that name, if any."""
        return self._tools.get(name)

    def activity(self, name: str) -> Activity | None:
        """The activity that runs a tool; None for a latent tool."""
        return self._activities.get(name)

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A registry with only the named tools (unknown names ignored)."""
        sub = ToolRegistry()
        for name in names:
            if name in self._tools:
                sub.add(self._tools[name], self._activities.get(name))
                if name in self._answerers:
                    sub._answerers[name] = self._answerers[name]
        return sub

    def validate(self, name: str, arguments: Any) -> str | None:
        """The first schema violation of a call's arguments as a readable message, or None."""
        validator = self._validators.get(name)
        if validator is None:
            return f"unknown tool {name!r}"
        if not isinstance(arguments, dict):
            return f"arguments for {name} must be a JSON object, got {type(arguments).__name__}"
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        if not errors:
            return None
        error = errors[0]
        where = "/".join(str(p) for p in error.path) or "(arguments)"
        return f"invalid arguments for {name}: {where}: {error.message}"

    def argument_schemas(self) -> dict[str, dict[str, Any]]:
        """Tool name → argument schema, as the text-protocol parser wants them."""
        return {name: tool.model_parameters() for name, tool in self._tools.items()}

    def openai_tools(self, *, compact: bool = False) -> list[dict[str, Any]]:
        """The `tools=[…]` list for the chat completions API (`compact`: a small window's)."""
        return [tool.openai(compact=compact) for tool in self._tools.values()]

    def composed_schemas(self) -> list[dict[str, Any]]:
        """Every tool's schema with the `_tool`, `_activity`, `_output` meta-fields."""
        return [
            tool.composed(name if name in self._activities else None)
            for name, tool in self._tools.items()
        ]

    def export(self, path: Path) -> Path:
        """Write the composed schemas as JSON (the `toolgate tools export` file)."""
        doc = {"tools": self.composed_schemas()}
        atomic_write_text(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return path


def strip_meta(arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Remove `_reasoningForCall` from arguments before the activity sees them."""
    args = dict(arguments)
    reason = args.pop(REASONING_FIELD, "")
    return args, reason if isinstance(reason, str) else str(reason)
