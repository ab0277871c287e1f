"""Everything a workspace and its person bring, gathered once, with where each came from.

The session service gathers it at each turn (the files are small, and a person editing a rule
expects the next turn to follow it); `toolgate config show`, VS Code's chat view and the LSP
command `toolgate.customization` draw it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.customize.commands import Commands, find_commands
from toolgate.customize.hooks import Hook
from toolgate.customize.rules import Rules, find_rules
from toolgate.customize.skills import Skills, find_skills


@dataclass(frozen=True)
class McpEntry:
    """One MCP server as found: where it came from and whether it will start."""

    name: str
    source: str
    state: str  # "ready", "waiting for confirmation", or why it is not used


@dataclass
class Customization:
    """Rules, skills, prompt commands, hooks and MCP servers of one workspace."""

    root: Path
    rules: Rules = field(default_factory=Rules)
    skills: Skills = field(default_factory=Skills)
    commands: Commands = field(default_factory=Commands)
    hooks: list[Hook] = field(default_factory=list)  # confirmed (or the person's own): they run
    waiting_hooks: list[Hook] = field(default_factory=list)  # a workspace's, not yet confirmed
    mcp: list[McpEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def all_problems(self) -> list[str]:
        """Every file that could not be used, one line each."""
        return [
            *self.rules.problems,
            *self.skills.problems,
            *self.commands.problems,
            *self.problems,
        ]

    def to_json(self) -> dict[str, Any]:
        """The same, for a client to draw (paths relative to the workspace where they are in it)."""
        return {
            "rules": [
                {"file": rule.label(self.root), "applies": rule.apply, "source": rule.source}
                for rule in self.rules.rules
            ],
            "skills": [
                {
                    "name": skill.name,
                    "description": skill.description,
                    "file": _label(skill.path, self.root),
                    "source": skill.source,
                    "license": skill.license,
                }
                for skill in self.skills.skills
            ],
            "commands": [
                {
                    "name": command.name,
                    "description": command.description,
                    "argumentHint": command.argument_hint,
                    "file": _label(command.path, self.root),
                    "source": command.source,
                }
                for command in self.commands.commands.values()
            ],
            "hooks": [
                {
                    "event": hook.event,
                    "matcher": hook.matcher,
                    "command": hook.command,
                    "source": hook.source,
                    "trusted": trusted,
                }
                for hook, trusted in [(h, True) for h in self.hooks]
                + [(h, False) for h in self.waiting_hooks]
            ],
            "mcpServers": [
                {"name": entry.name, "source": entry.source, "state": entry.state}
                for entry in self.mcp
            ],
            "problems": self.all_problems(),
            "notices": list(self.commands.notices),
        }

    def lines(self) -> list[str]:
        """What was found, as a person reads it (`toolgate config show`)."""
        out: list[str] = []
        section(out, "rules", [f"{r.label(self.root)} ({r.apply})" for r in self.rules.rules])
        section(
            out,
            "skills",
            [
                f"{s.name}: {s.description} ({_label(s.path, self.root)})"
                for s in self.skills.skills
            ],
        )
        section(
            out,
            "commands",
            [
                f"/{c.name}"
                + (f": {c.description}" if c.description else "")
                + f" ({_label(c.path, self.root)})"
                for c in self.commands.commands.values()
            ],
        )
        section(
            out,
            "hooks",
            [_hook_line(h, "runs") for h in self.hooks]
            + [_hook_line(h, "waits for your confirmation") for h in self.waiting_hooks],
        )
        section(out, "MCP servers", [f"{e.name}: {e.state} ({e.source})" for e in self.mcp])
        notices = [*self.commands.notices, *self.all_problems()]
        section(out, "notes", notices)
        return out


def _hook_line(hook: Hook, state: str) -> str:
    matcher = f" [{hook.matcher}]" if hook.matcher else ""
    return f"{hook.event}{matcher}: {hook.command} — {state} ({hook.source})"


def section(out: list[str], title: str, items: Iterable[str]) -> None:
    """A titled list; an empty one says so, so the person knows it was looked for."""
    items = list(items)
    out.append(f"{title}:" if items else f"{title}: none")
    out.extend(f"  {item}" for item in items)


def _label(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        home = Path.home()
        try:
            return "~/" + path.relative_to(home).as_posix()
        except ValueError:
            return str(path)


def gather(
    root: Path,
    *,
    builtin_commands: Iterable[str],
    hooks: Iterable[Hook] = (),
    waiting_hooks: Iterable[Hook] = (),
    mcp: Iterable[McpEntry] = (),
    problems: Iterable[str] = (),
    user: bool = True,
) -> Customization:
    """Read the workspace's (and the person's) customization files now."""
    return Customization(
        root=root,
        rules=find_rules(root, user=user),
        skills=find_skills(root, user=user),
        commands=find_commands(root, frozenset(builtin_commands), user=user),
        hooks=list(hooks),
        waiting_hooks=list(waiting_hooks),
        mcp=list(mcp),
        problems=list(problems),
    )
