"""What a workspace brings, put to work in a run.

Hooks around calls, rules for the files a call touched, the skills' tool and the narrowing a
loaded skill asks for. Built once here, so every front end (language server, terminal, ACP,
MCP) gets the same behaviour (docs/CUSTOMIZE.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from toolgate.agent.call_hooks import NO_SAY, Verdict
from toolgate.agent.prompt import Instructions
from toolgate.config import Config, apply_trust
from toolgate.customize.catalog import Customization, McpEntry, gather
from toolgate.customize.commands import PromptCommand as PromptCommand  # prompt_commands()' record
from toolgate.customize.commands import find_commands
from toolgate.customize.hooks import KIND_ALIASES, Hook, HookOutcome, HookRunner, tool_input_for
from toolgate.customize.rules import Rules, attached_note, find_rules
from toolgate.customize.skills import Skill
from toolgate.records import ToolCall, ToolResult
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import Tool
from toolgate.tools.skill_tool import LOAD_SKILL, LoadSkill, load_skill_tool
from toolgate.trust import TrustStore

# A share of the model's window that rules may take at most; the rest is the conversation's.
RULES_SHARE = 4
_ALWAYS_ALLOWED = frozenset({LOAD_SKILL, "final_answer"})
_PATH_ARGUMENTS = ("path", "paths", "files")


def offer_skills(registry: ToolRegistry, instructions: Instructions) -> None:
    """Add `load_skill` when there are skills to load (and the profile offers tools at all)."""
    if instructions.agent_skills and LOAD_SKILL not in registry:
        from toolgate.customize.skills import Skills

        found = Skills(skills=list(instructions.agent_skills))
        registry.add(load_skill_tool(found), LoadSkill(found))


def fit_rules(instructions: Instructions, window: int, notice: Callable[[str], None]) -> None:
    """Rules take at most a quarter of the window; what is cut is said, by file."""
    instructions.fit_rules(window // RULES_SHARE)
    if instructions.cut:
        root = instructions.root or Path(".")
        names = ", ".join(rule.label(root) for rule in instructions.cut)
        notice(
            f"rules left out to fit the model's window of {window} tokens "
            f"(rules may take a quarter of it): {names}"
        )


def _touched(args: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for key in _PATH_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found.extend(str(item) for item in value)
    return [path.strip().removeprefix("./").lstrip("/") for path in found if path.strip()]


def _allowed_names(skill: Skill) -> set[str]:
    # `Bash(git:*)` narrows Claude Code's shell to git; here it names the kind, as a tool name.
    return {re.sub(r"\(.*\)$", "", name).strip() for name in skill.allowed_tools}


class RunCustomization:
    """The gate's `CallHooks` for one run: the workspace's hooks, rules and loaded skills."""

    def __init__(
        self,
        root: Path,
        hooks: Iterable[Hook],
        *,
        session_id: str,
        transcript_path: str,
        notice: Callable[[str], None],
        skills: Iterable[Skill] = (),
        rules: Rules | None = None,
        sent_rules: Iterable[str] = (),
        on_rules: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.root = root
        self.runner = HookRunner(hooks, root)
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.notice = notice
        self.skills = {skill.name: skill for skill in skills}
        self.rules = rules if rules is not None else find_rules(root)
        # The always-on rules are in the system prompt already: never attached again.
        self.sent: set[str] = set(sent_rules)
        self.narrowing: Skill | None = None  # the loaded skill whose allowed-tools hold now
        self.on_rules = on_rules  # told the files of the rules attached to a result

    def _fields(self, **extra: Any) -> dict[str, Any]:
        return {"session_id": self.session_id, "transcript_path": self.transcript_path, **extra}

    def _report(self, outcome: HookOutcome) -> None:
        for line in [*outcome.problems, *outcome.messages]:
            self.notice(line)

    async def fire(self, event: str, **fields: Any) -> HookOutcome:
        """Run an event's hooks that concern no tool (prompt, start, stop, compaction)."""
        outcome = await self.runner.fire(event, self._fields(**fields))
        self._report(outcome)
        return outcome

    def _narrowed_out(self, tool: Tool) -> bool:
        skill = self.narrowing
        if skill is None or tool.name in _ALWAYS_ALLOWED:
            return False
        names = _allowed_names(skill)
        return tool.name not in names and not names & set(KIND_ALIASES.get(tool.kind, ()))

    async def stop(self, answer: str | None, active: bool) -> str | None:
        """The Stop hooks: a reason to go on working, or None to end the run here."""
        outcome = await self.fire(
            "Stop", stop_hook_active=active, last_assistant_message=answer or ""
        )
        return outcome.reason if outcome.blocked else None

    async def pre_compact(self) -> None:
        """The PreCompact hooks, before the earlier turns are summarised."""
        await self.fire("PreCompact", trigger="auto")

    async def before(self, call: ToolCall, tool: Tool, args: dict[str, Any]) -> Verdict:
        """A loaded skill's narrowing, then the PreToolUse hooks."""
        if self.narrowing is not None and self._narrowed_out(tool):
            allowed = ", ".join(self.narrowing.allowed_tools)
            return Verdict(
                "deny",
                f"the skill {self.narrowing.name!r} you are following allows only: {allowed}",
            )
        if not self.runner.wanted("PreToolUse", tool.name, tool.kind):
            return NO_SAY
        outcome = await self.runner.fire(
            "PreToolUse",
            self._fields(tool_input=tool_input_for(args, self.root)),
            tool_name=tool.name,
            kind=tool.kind,
        )
        self._report(outcome)
        return Verdict(outcome.decision, outcome.reason)

    async def after(
        self, call: ToolCall, tool: Tool, args: dict[str, Any], result: ToolResult
    ) -> list[str]:
        """Rules for the files the call touched, a loaded skill's narrowing, PostToolUse hooks."""
        notes: list[str] = []
        if tool.name == LOAD_SKILL and result.success and not args.get("file"):
            skill = self.skills.get(str(args.get("name")))
            if skill is not None and skill.allowed_tools:
                self.narrowing = skill
        if result.success:
            rules = self.rules.for_paths(_touched(args), self.sent)
            if rules:
                notes.append(attached_note(rules, self.root))
                if self.on_rules is not None:
                    self.on_rules([rule.label(self.root) for rule in rules])
        if self.runner.wanted("PostToolUse", tool.name, tool.kind):
            outcome = await self.runner.fire(
                "PostToolUse",
                self._fields(
                    tool_input=tool_input_for(args, self.root), tool_response=result.to_dict()
                ),
                tool_name=tool.name,
                kind=tool.kind,
            )
            self._report(outcome)
            if outcome.decision == "deny":
                notes.append(f"A hook of this project says: {outcome.reason}")
            notes.extend(outcome.context)
        return notes


async def prompt_context(
    custom: RunCustomization, task: str, *, new_session: bool
) -> tuple[str, str | None]:
    """SessionStart (for a new session) and UserPromptSubmit: (context for the model, why not).

    The second item is the reason a hook blocked the prompt, or None.
    """
    context: list[str] = []
    if new_session:
        started = await custom.fire("SessionStart", source="startup")
        context.extend(started.context)
    submitted = await custom.fire("UserPromptSubmit", prompt=task)
    if submitted.blocked:
        return "", submitted.reason
    context.extend(submitted.context)
    if not context:
        return "", None
    return "[context from this project's hooks]\n" + "\n\n".join(context), None


def always_digests(instructions: Instructions) -> list[str]:
    """The digests of the rules the system prompt carries (never attached to a result)."""
    return [rule.digest for rule in instructions.rules]


# Every front end's own slash commands: a prompt file never takes one of these names in any
# of them, so `/undo` means the same in the terminal, the chat view and an ACP editor.
BUILTIN_COMMANDS = frozenset(
    {
        "help",
        "exit",
        "quit",
        "new",
        "sessions",
        "load",
        "undo",
        "tests",
        "review",
        "model",
        "mode",
        "rewind",
        "commands",
    }
)


def gather_customization(root: Path, config: Config) -> Customization:
    """What the workspace and the person bring now, with trust states and sources.

    The confirmations the person gave (the user-level trust store) are applied to `config`
    first, so what they confirmed shows as ready and only the rest as waiting.
    """
    apply_trust(config, TrustStore().confirmed(root))
    waiting = [
        Hook(
            item.key[6:],
            item.value["command"],
            item.value.get("matcher", ""),
            float(item.value.get("timeout", 60)),
            item.source,
        )
        for item in config.pending_trust
        if item.key.startswith("hooks.")
    ]
    mcp = [
        McpEntry(name, config.mcp.sources.get(name, "configuration"), "ready")
        for name in config.mcp.servers
    ] + [
        McpEntry(item.key[12:], item.source, "waits for your confirmation")
        for item in config.pending_trust
        if item.key.startswith("mcp.servers.")
    ]
    return gather(
        root,
        builtin_commands=BUILTIN_COMMANDS,
        hooks=config.hooks,
        waiting_hooks=waiting,
        mcp=mcp,
        problems=config.notes,
    )


def prompt_commands(root: Path) -> dict[str, PromptCommand]:
    """The workspace's and the person's prompt commands, read now, by name."""
    return find_commands(root, BUILTIN_COMMANDS).commands


def expand_command(root: Path, text: str) -> tuple[str, PromptCommand] | None:
    """`/NAME args` as the prompt its file makes, or None when no prompt file has that name."""
    if not text.startswith("/"):
        return None
    name, _, arguments = text[1:].partition(" ")
    if not name or name in BUILTIN_COMMANDS:
        return None
    found = find_commands(root, BUILTIN_COMMANDS)
    command = found.commands.get(name)
    if command is None:
        return None
    return command.expand(arguments), command
