"""The system prompt: the profile's instructions, the rules, the skills, and the text protocol."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from toolgate.customize.rules import Rule, find_rules, on_request_section, rules_section
from toolgate.customize.skills import Skill, find_skills, skills_section
from toolgate.tools.builtins import builtin_tools
from toolgate.tools.schema import READ

_MAX_INSTRUCTION_BYTES = 64_000

# Windows of at most this many tokens get the compact prompt unless the configuration says
# otherwise (`tool_calling.compact_prompt`): the whole prompt, about 2,400 tokens with its
# ten tool schemas, would leave a 4,096-token window little more than a few hundred tokens
# beside the answer's room, and an 8,192-token one lose a third of what a request may hold.
COMPACT_WINDOW = 8192


def wants_compact(setting: bool | None, window: int, *, small_model: bool = False) -> bool:
    """Whether a run sends the compact prompt: as configured, else for a small window or model."""
    if setting is not None:
        return setting
    return small_model or window <= COMPACT_WINDOW


@dataclass
class Profile:
    """A named set of tools plus instructions."""

    name: str
    instructions: str
    tools: list[str] | None = None  # None = every tool
    source: str = "built-in"
    # What the compact prompt (a small window) says instead of `instructions`; "": the same.
    compact: str = ""

    def role(self, *, compact: bool) -> str:
        """The profile's words in the system prompt: its compact ones when `compact`."""
        return (self.compact or self.instructions) if compact else self.instructions


@dataclass
class Instructions:
    """What the workspace (and the person) tell the agent in every request."""

    root: Path | None = None
    rules: list[Rule] = field(default_factory=list)  # always-on, identical text once
    on_request: list[Rule] = field(default_factory=list)  # listed by description
    agent_skills: list[Skill] = field(default_factory=list)  # SKILL.md: listed, loaded on demand
    skills: dict[str, str] = field(default_factory=dict)  # .agent/skills/*.md: sent whole
    cut: list[Rule] = field(default_factory=list)  # rules left out to fit the window
    problems: list[str] = field(default_factory=list)

    def fit_rules(self, max_tokens: int) -> None:
        """Keep the rules, in order, within `max_tokens`; the rest are cut and named."""
        kept: list[Rule] = []
        used = 0
        for rule in self.rules:
            cost = len(rule.text.encode()) // 3 + 8  # the budget's estimate: bytes / 3
            if used + cost > max_tokens:
                self.cut.append(rule)
                continue
            kept.append(rule)
            used += cost
        self.rules = kept


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1:
        return {}, text
    meta: dict[str, str] = {}
    for line in text[3:end].strip().splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            meta[key.strip()] = value.strip()
    return meta, text[end + 4 :].lstrip("\n")


def _tool_list(value: str) -> list[str]:
    value = value.strip()
    if value.startswith("["):
        try:
            return [str(v) for v in json.loads(value)]
        except ValueError:
            value = value.strip("[]")
    return [part.strip().strip("'\"") for part in value.split(",") if part.strip()]


def _reviewer_tools() -> list[str]:
    """What a reviewer may call: the built-in reads, and the test run."""
    return [t.name for t in builtin_tools() if t.kind == READ or "tests.run" in t.capabilities]


def builtin_profiles() -> dict[str, Profile]:
    """The profiles shipped with Toolgate."""
    folder = resources.files("toolgate.agent") / "profiles"
    developer = (folder / "developer.md").read_text("utf-8")
    short = (folder / "developer-compact.md").read_text("utf-8").strip()
    reviewer = (folder / "reviewer.md").read_text("utf-8")
    return {
        "developer": Profile("developer", developer, None, compact=short),
        "reviewer": Profile("reviewer", reviewer, _reviewer_tools()),
    }


def _workspace_file(root: Path, path: Path) -> bool:
    """A regular file whose real path is inside the workspace (symlinks out are not followed)."""
    real_root, real = os.path.realpath(root), os.path.realpath(path)
    return os.path.isfile(real) and os.path.commonpath([real_root, real]) == real_root


def load_profile(root: Path, name: str) -> Profile:
    """A workspace profile from .agent/profiles/NAME.md, else a built-in one."""
    folder = root / ".agent" / "profiles"
    path = folder / f"{name}.md"
    # The name may come from workspace files: it names a file in that folder, nothing else,
    # or a file from anywhere on disk would be sent to the model as instructions.
    if path.parent == folder and name not in ("", ".", "..") and _workspace_file(root, path):
        meta, body = _front_matter(path.read_text("utf-8", errors="replace"))
        tools = _tool_list(meta["tools"]) if "tools" in meta else None
        return Profile(name, body.strip(), tools, source=str(path))
    profiles = builtin_profiles()
    if name not in profiles:
        known = sorted(set(profiles) | {p.stem for p in folder.glob("*.md")})
        raise KeyError(f"unknown profile {name!r}; available: {', '.join(known)}")
    return profiles[name]


def load_instructions(root: Path, *, user: bool = True) -> Instructions:
    """The rules files, the skills, and the older .agent/skills/*.md (docs/CUSTOMIZE.md)."""
    rules = find_rules(root, user=user)
    agent_skills = find_skills(root, user=user)
    found = Instructions(
        root=root,
        rules=rules.always(),
        on_request=rules.on_request(),
        agent_skills=agent_skills.skills,
        problems=[*rules.problems, *agent_skills.problems],
    )
    skills = root / ".agent" / "skills"
    if skills.is_dir():
        for path in sorted(skills.glob("*.md")):
            if not _workspace_file(root, path):
                continue
            found.skills[path.stem] = path.read_text("utf-8", errors="replace")[
                :_MAX_INSTRUCTION_BYTES
            ]
    return found


def system_prompt(
    profile: Profile,
    instructions: Instructions,
    *,
    tools_text: str | None = None,
    tools_enabled: bool = True,
) -> str:
    """Assemble the system prompt."""
    parts = [profile.instructions.strip()]
    if not tools_enabled:
        parts = ["You are a helpful coding assistant. Answer in prose; no tools are available."]
    root = instructions.root or Path(".")
    if instructions.rules:
        parts.append(rules_section(instructions.rules, root))
    if instructions.on_request:
        parts.append(on_request_section(instructions.on_request, root))
    if instructions.agent_skills and tools_enabled:
        parts.append(skills_section(instructions.agent_skills))
    for name, text in instructions.skills.items():
        parts.append(f"# Skill: {name}\n\n{text.strip()}")
    if tools_text:
        parts.append(tools_text.strip())
    return "\n\n".join(parts) + "\n"
