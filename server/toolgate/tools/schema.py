"""A tool is an interface: a name, a description and JSON Schemas for its arguments and output."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

REASONING_FIELD = "_reasoningForCall"
_ARGUMENT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_REASONING_SCHEMA = {
    "type": "string",
    "description": "One short sentence: why you make this call. Shown to the person reviewing it.",
}


def _fill(label: str, arguments: dict[str, Any]) -> str:
    """`label` with each `{argument}` replaced by the call's value, cut short to stay one line."""

    def value(match: re.Match[str]) -> str:
        found = arguments.get(match.group(1))
        if isinstance(found, (list, tuple)):
            found = ", ".join(str(item) for item in found)
        text = " ".join(str(found if found is not None else "").split())
        return text if len(text) <= 60 else text[:57] + "…"

    return " ".join(_ARGUMENT.sub(value, label).split())


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments: these properties, these required, no others."""
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


# What a tool does, the one fact the gate, the approval modes, the repeat guard, the account
# and every front end read. A tool that says nothing of itself (another MCP server's without
# annotations, a manifest without `kind`) is OTHER: it may change anything.
READ = "read"  # looks, changes nothing
CHANGE = "change"  # changes files (a proposal, reviewed as a diff)
RUN = "run"  # runs code: tests, commands
GIT = "git"  # changes git's state: the index, commits
OTHER = "other"
KINDS = (READ, CHANGE, RUN, GIT, OTHER)
KIND_WORDS = {
    READ: "reads",
    CHANGE: "changes files",
    RUN: "runs code",
    GIT: "changes git's state",
    OTHER: "may change things",
}

# How a call counts in the repeat guard (`agent/repeats.py`), once it succeeded.
LOOK = "look"  # run again out of sight when repeated; refused only if it answers the same
SEEN_BY_GIT = "git"  # every effect shows in git's view: a change only if that view moved
FRESH = "fresh"  # may have changed anything: every call seen before may be made again
SAME = "same"  # its answer stands until something changes: a repeat is refused
REPEATS = (LOOK, SEEN_BY_GIT, FRESH, SAME)

# How an ACP client draws each kind (ACP's ToolKind); a tool may name its own.
ACP_KINDS = {READ: "read", CHANGE: "edit", RUN: "execute", GIT: "execute", OTHER: "other"}


@dataclass(frozen=True)
class Tool:
    """What the model sees of a tool, and the facts every part of Toolgate reads about it.

    Adding a built-in tool is this record (with its activity) in `toolgate.tools.builtins`:
    the gate's default, the approval modes, the repeat guard, the capability registry, the
    account's words and the front ends' drawing all come from these fields.
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    output: dict[str, Any] | None = None
    # What it does (READ, CHANGE, RUN, GIT, OTHER): "read-only" runs only reads.
    kind: str = READ
    # Whether the gate asks the person by default. A program checked against the allow-list
    # (tests, commands, argv manifests) runs at once on it and is asked for off it, whatever
    # this says; for a built-in it says whether a workspace's `auto` widens the policy.
    asks: bool = False
    # Whether calling it runs a program (git, tests, commands): refused in untrusted workspaces.
    executes: bool = False
    # A default decision the tool declares itself (a tool.yaml's `gate`); config approvals win.
    gate: str | None = None
    # What the tool can do, as `domain.action` names (the capability registry reads them).
    capabilities: tuple[str, ...] = ()
    # The fields of its result the capability registry promises, when `output` has no schema.
    outputs: tuple[str, ...] = ()
    # How a call counts in the repeat guard (LOOK, SEEN_BY_GIT, FRESH, SAME); "": by its kind.
    repeat: str = ""
    # What a call did, in the words of the run's account: "read {path}", arguments in braces.
    label: str = ""
    # How an ACP client draws it (read, edit, search, execute, think, …); "": by its kind.
    acp_kind: str = ""
    # What the model is told when a result was cut to fit its window: how to read the rest.
    when_cut: str = ""
    # What the compact prompt (a small window) says of it: one short line. "": the
    # description's first sentence.
    compact: str = ""

    @property
    def repeats_as(self) -> str:
        """How a call counts in the repeat guard: its own say, else by its kind."""
        return self.repeat or (SAME if self.kind == READ else FRESH)

    @property
    def acp(self) -> str:
        """Its ACP tool kind: its own say, else by its kind."""
        return self.acp_kind or ACP_KINDS.get(self.kind, "other")

    def did(self, arguments: dict[str, Any]) -> str:
        """What one call did, in words: the label with the call's arguments filled in."""
        return _fill(self.label or f"used {self.name}", arguments)

    @property
    def summary(self) -> str:
        """The first line of the description."""
        return self.description.strip().splitlines()[0] if self.description.strip() else self.name

    @property
    def compact_description(self) -> str:
        """What the compact prompt says of the tool: its own short line, else a first sentence."""
        if self.compact:
            return self.compact
        first = " ".join(self.description.split()).split(". ")[0].rstrip(".")
        return first + "." if first else self.name

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

    def compact_parameters(self) -> dict[str, Any]:
        """The argument schema the compact prompt sends: types and names, nothing to read.

        No argument's description, bound or `additionalProperties`, and no `_reasoningForCall`
        (a sentence per call is a cost a small window cannot spare; sent anyway, it is taken):
        calls are still checked against the whole schema (`model_parameters`).
        """
        properties = self.parameters.get("properties") or {}
        slim: dict[str, Any] = {
            "type": "object",
            "properties": {name: _bare(schema) for name, schema in properties.items()},
        }
        if self.parameters.get("required"):
            slim["required"] = list(self.parameters["required"])
        return slim

    def openai(self, *, compact: bool = False) -> dict[str, Any]:
        """The entry of an OpenAI `tools=[…]` list (`compact`: as the compact prompt sends it)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.compact_description if compact else self.description,
                "parameters": self.compact_parameters() if compact else self.model_parameters(),
            },
        }


# What a compact schema keeps of an argument: what a call must get right to be valid.
_BARE_KEYS = ("type", "enum", "items", "properties", "required")


def _bare(schema: Any) -> Any:
    """An argument's schema with only its shape: type, enum, items, nested properties."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {key: schema[key] for key in _BARE_KEYS if key in schema}
    if isinstance(out.get("items"), dict):
        out["items"] = _bare(out["items"])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _bare(v) for k, v in out["properties"].items()}
    return out
