"""Prompt files that become slash commands, in the three formats people already keep.

- `.github/prompts/NAME.prompt.md` (Copilot): front matter `description`, `agent` (or the
  older `mode`), `model`, `tools`; the body may hold `${input:NAME}` or
  `${input:NAME:placeholder}`, filled from `NAME=value` arguments (the first one also takes
  free text), and `${selection}`-style editor variables are left as written.
- `.claude/commands/**/NAME.md` (Claude Code): front matter `description`, `argument-hint`,
  `model`; `$ARGUMENTS` is every argument, `$1`, `$2`… one each.
- `.gemini/commands/**/NAME.toml` (Gemini CLI): `prompt` (required) and `description`;
  `{{args}}` is the arguments, and without it the arguments follow the prompt after a blank
  line. A folder makes a namespace: `git/commit.toml` is `/git:commit`.

The person's own commands are read from the same shapes under `$XDG_CONFIG_HOME/toolgate/`
(`prompts/`, `commands/`). What runs a shell (`!{…}` in Gemini's files, a `!` line in Claude's)
is never run: Toolgate has no shell; the text stays as written and the command says so once.
A built-in command keeps its name; a file that names the same one is reached as
`project:NAME` (or `user:NAME`), and the clash is said once.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.customize.frontmatter import FrontMatterError, split_front_matter, words
from toolgate.customize.places import inside, read_text, user_config_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_INPUT = re.compile(r"\$\{input:([A-Za-z0-9_.-]+)(?::([^}]*))?\}")
_POSITIONAL = re.compile(r"\$(\d+)")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
# Gemini's `!{command}` and Claude's "!`command`": output of a shell put into the prompt.
_SHELL = re.compile(r"!\{|!`")


@dataclass(frozen=True)
class PromptCommand:
    """One slash command a prompt file makes."""

    name: str
    template: str
    path: Path
    style: str  # "copilot", "claude" or "gemini": how arguments are put in
    source: str  # "workspace" or "user"
    description: str = ""
    argument_hint: str = ""
    model: str = ""
    tools: tuple[str, ...] = ()

    def expand(self, arguments: str) -> str:
        """The prompt with the arguments put in, as the format's own agent puts them."""
        arguments = arguments.strip()
        if self.style == "claude":
            return _claude_expand(self.template, arguments)
        if self.style == "gemini":
            if "{{args}}" in self.template:
                return self.template.replace("{{args}}", arguments).strip()
            return (self.template.strip() + ("\n\n" + arguments if arguments else "")).strip()
        return _copilot_expand(self.template, arguments)


def _split(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def _claude_expand(template: str, arguments: str) -> str:
    values = _split(arguments)
    text = template.replace("$ARGUMENTS", arguments)

    def positional(match: re.Match[str]) -> str:
        index = int(match.group(1)) - 1
        return values[index] if 0 <= index < len(values) else ""

    text = _POSITIONAL.sub(positional, text)
    if arguments and "$ARGUMENTS" not in template and not _POSITIONAL.search(template):
        text = text.rstrip() + "\n\n" + arguments
    return text.strip()


def _copilot_expand(template: str, arguments: str) -> str:
    named: dict[str, str] = {}
    free: list[str] = []
    for part in _split(arguments):
        key, sep, value = part.partition("=")
        if sep and re.fullmatch(r"[A-Za-z0-9_.-]+", key):
            named[key] = value
        else:
            free.append(part)
    rest = " ".join(free)
    used_free = False

    def fill(match: re.Match[str]) -> str:
        nonlocal used_free
        name, placeholder = match.group(1), match.group(2) or ""
        if name in named:
            return named[name]
        if rest and not used_free:
            used_free = True
            return rest
        return placeholder or name

    text = _INPUT.sub(fill, template)
    if rest and not used_free:
        text = text.rstrip() + "\n\n" + rest
    return text.strip()


@dataclass
class Commands:
    """The prompt commands found, by name, and what could not be read or was renamed."""

    commands: dict[str, PromptCommand] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def add(self, command: PromptCommand, builtin: frozenset[str]) -> None:
        """Add a command; a built-in's name or one already taken moves it under a prefix."""
        name = command.name
        if name in builtin or name in self.commands:
            prefixed = f"{'project' if command.source == 'workspace' else 'user'}:{name}"
            owner = "a built-in command" if name in builtin else str(self.commands[name].path)
            if prefixed in self.commands:
                self.problems.append(
                    f"{command.path}: /{name} is taken by {owner} and /{prefixed} by "
                    f"{self.commands[prefixed].path}; left out"
                )
                return
            self.notices.append(f"/{name} is {owner}; {command.path} is /{prefixed}")
            command = _renamed(command, prefixed)
        self.commands[command.name] = command


def _renamed(command: PromptCommand, name: str) -> PromptCommand:
    from dataclasses import replace

    return replace(command, name=name)


def _meta_text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    return "" if value is None else str(value).strip()


def _markdown_command(path: Path, name: str, style: str, source: str) -> PromptCommand | str:
    try:
        meta, body = split_front_matter(read_text(path))
    except FrontMatterError as exc:
        return f"{path}: {exc}; left out"
    except OSError as exc:
        return f"{path}: cannot be read ({exc.strerror or exc}); left out"
    if not body.strip():
        return f"{path}: no prompt under the front matter; left out"
    return PromptCommand(
        name=name,
        template=body,
        path=path,
        style=style,
        source=source,
        description=_meta_text(meta, "description"),
        argument_hint=_meta_text(meta, "argument-hint"),
        model=_meta_text(meta, "model"),
        tools=tuple(words(meta.get("tools") or meta.get("allowed-tools"))),
    )


def _toml_command(path: Path, name: str, source: str) -> PromptCommand | str:
    try:
        doc = tomllib.loads(read_text(path))
    except (OSError, tomllib.TOMLDecodeError, ValueError) as exc:
        return f"{path}: not valid TOML ({exc}); left out"
    prompt = doc.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return f"{path}: prompt: a required string, missing; left out"
    return PromptCommand(
        name=name,
        template=prompt,
        path=path,
        style="gemini",
        source=source,
        description=str(doc.get("description") or "").strip(),
    )


def _namespaced(base: Path, path: Path, suffix: str) -> str:
    relative = path.relative_to(base).as_posix()
    return relative[: -len(suffix)].replace("/", ":")


def _files(root: Path, base: Path, pattern: str, trusted_anywhere: bool) -> list[Path]:
    if not base.is_dir():
        return []
    found = sorted(base.glob(pattern))
    return [p for p in found if p.is_file() and (trusted_anywhere or inside(root, p))]


def find_commands(root: Path, builtin: frozenset[str], *, user: bool = True) -> Commands:
    """Every prompt command, the workspace's first; built-in names keep their meaning."""
    found = Commands()
    places: list[tuple[Path, str]] = [(root, "workspace")]
    if user:
        places.append((user_config_dir(), "user"))
    for base, source in places:
        trusted_anywhere = source == "user"
        if source == "workspace":
            prompts, claude, gemini = (
                base / ".github" / "prompts",
                base / ".claude" / "commands",
                base / ".gemini" / "commands",
            )
        else:
            prompts, claude, gemini = base / "prompts", base / "commands", base / "commands"
        made: list[PromptCommand | str] = []
        for path in _files(root, prompts, "*.prompt.md", trusted_anywhere):
            made.append(_markdown_command(path, path.name[:-10], "copilot", source))
        for path in _files(root, claude, "**/*.md", trusted_anywhere):
            made.append(_markdown_command(path, path.stem, "claude", source))
        for path in _files(root, gemini, "**/*.toml", trusted_anywhere):
            made.append(_toml_command(path, _namespaced(gemini, path, ".toml"), source))
        for item in made:
            if isinstance(item, str):
                found.problems.append(item)
            elif not _NAME.match(item.name):
                found.problems.append(f"{item.path}: {item.name!r} is not a command name; left out")
            else:
                if _SHELL.search(item.template):
                    found.notices.append(
                        f"{item.path}: its shell lines are not run (Toolgate has no shell); "
                        "they reach the model as written"
                    )
                found.add(item, builtin)
    return found
