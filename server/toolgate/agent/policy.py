"""The policy: for each call, auto, ask or deny — by the settings, the tool's kind and the mode.

The approval mode is the person's choice for a session, the same in every front end (the
session service offers them, `toolgate.session.modes`): "ask" leaves the settings as they are,
"read-only" refuses every tool that is not a read, "auto-edits" applies file changes without
asking. A mode is decided by what the tool does (`Tool.kind`), never by its name, so a test
run, a manifest tool or another MCP server's tool is refused in "read-only" like git is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from toolgate.config import Config
from toolgate.tools.schema import CHANGE, KIND_WORDS, READ, Tool

READ_ONLY, ASK, AUTO_EDITS = "read-only", "ask", "auto-edits"
MODES = (READ_ONLY, ASK, AUTO_EDITS)


class Decision(str, Enum):
    """What the gate does with a call."""

    AUTO = "auto"
    ASK = "ask"
    DENY = "deny"


@dataclass
class Policy:
    """Per-tool approvals plus allow and deny lists by tool name."""

    approvals: dict[str, Decision] = field(default_factory=dict)
    allow_tools: list[str] | None = None  # None = every registered tool
    deny_tools: list[str] = field(default_factory=list)
    mode: str = ASK  # the approval mode (MODES)

    def decide(self, tool: Tool, *, command_allowed: bool | None = None) -> Decision:
        """The decision for one call of `tool` (commands: whether argv is on the allow-list)."""
        if self.mode == READ_ONLY and tool.kind != READ:
            return Decision.DENY
        decision = self._by_settings(tool, command_allowed)
        if self.mode == AUTO_EDITS and decision == Decision.ASK and _edits(tool):
            return Decision.AUTO
        return decision

    def _by_settings(self, tool: Tool, command_allowed: bool | None) -> Decision:
        if tool.name in self.deny_tools:
            return Decision.DENY
        if self.allow_tools is not None and tool.name not in self.allow_tools:
            return Decision.DENY
        if command_allowed is False:
            # Off the allow-list: only a person's explicit yes for this very command.
            explicit = self.approvals.get(tool.name)
            return Decision.DENY if explicit == Decision.DENY else Decision.ASK
        if tool.name in self.approvals:
            return self.approvals[tool.name]
        if tool.gate is not None:
            return Decision(tool.gate)
        if command_allowed:  # a program on the allow-list runs at once
            return Decision.AUTO
        return Decision.ASK if tool.asks else Decision.AUTO

    def rule(self, tool: Tool, *, command_allowed: bool | None = None) -> str:
        """The setting that makes `decide` deny a call, named as a person writes it."""
        if self.mode == READ_ONLY and tool.kind != READ:
            return (
                f'the approval mode "{READ_ONLY}": only tools that read may run, and '
                f"{tool.name} {KIND_WORDS.get(tool.kind, KIND_WORDS['other'])}"
            )
        if tool.name in self.deny_tools:
            return f"policy.deny_tools lists {tool.name}"
        if self.allow_tools is not None and tool.name not in self.allow_tools:
            return f"policy.allow_tools does not list {tool.name}"
        if tool.name in self.approvals:
            return f'policy.approvals.{tool.name} = "{self.approvals[tool.name].value}"'
        if command_allowed is False:
            return "the command is not on policy.allowed_commands"
        return f'the policy default for {tool.name} ("{tool.gate or "deny"}")'


def _edits(tool: Tool) -> bool:
    """A file change reviewed as a diff: what "auto-edits" applies (a program never is)."""
    return tool.kind == CHANGE and not tool.executes


def policy_for(config: Config, mode: str = ASK) -> Policy:
    """The gate's policy from the merged settings and the session's approval mode."""
    if mode not in MODES:
        raise ValueError(f"unknown approval mode {mode!r}; the modes are {', '.join(MODES)}")
    return Policy(
        approvals={name: Decision(value) for name, value in config.policy.approvals.items()},
        allow_tools=config.policy.allow_tools,
        deny_tools=list(config.policy.deny_tools),
        mode=mode,
    )
