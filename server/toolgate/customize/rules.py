"""Rules files: the standing instructions a workspace keeps for every agent that works in it.

Read in this order, which is also the order the model sees them in (later ones are more
specific, so they come nearer the task):

1. the person's own `$XDG_CONFIG_HOME/toolgate/AGENTS.md`;
2. at the workspace root: `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`,
   `.github/copilot-instructions.md`, `.clinerules` (a file, or a folder of `.md` files),
   `.continue/rules/*.md`, `.cursor/rules/*.mdc`, `.github/instructions/*.instructions.md`;
3. `AGENTS.md` in a subfolder, which applies only when the turn reads or changes a file under
   that folder (as Codex reads them), nearest the root first.

A rule either always applies (sent in the system prompt, which then never changes within a
session), applies when a file the turn touches matches its globs (sent once, with the result
of the call that touched it), or is one the model may ask for by its description. A rule with
none of these (Cursor's "manual" rules, an instructions file with no `applyTo`) is listed but
never sent on its own. Identical text is sent once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from toolgate.customize.frontmatter import FrontMatterError, globs, split_front_matter
from toolgate.customize.places import inside, read_text, user_config_dir

# How each rule comes to the model.
ALWAYS = "always"  # in the system prompt
GLOBS = "globs"  # when a touched file matches
ON_REQUEST = "on_request"  # the model reads it when its description fits
MANUAL = "manual"  # never on its own

_ROOT_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md")
# Folders no subfolder AGENTS.md is looked for in: tools' caches, dependencies, VCS data.
_SKIPPED_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".toolgate", ".tox", "dist", "build"}
)
_MAX_SUBFOLDER_DEPTH = 6


@dataclass(frozen=True)
class Rule:
    """One rules file, or one file of a rules folder."""

    path: Path
    text: str
    source: str  # "user" or "workspace"
    apply: str = ALWAYS
    patterns: tuple[str, ...] = ()  # globs, relative to the workspace root
    description: str = ""
    folder: str = ""  # for a subfolder AGENTS.md: the folder it governs, relative to the root

    @property
    def digest(self) -> str:
        """The text's hash: identical text from two files is sent once."""
        return hashlib.sha256(self.text.strip().encode()).hexdigest()[:16]

    def label(self, root: Path) -> str:
        """The file as a person names it: relative to the workspace, else with `~`."""
        try:
            return self.path.relative_to(root).as_posix()
        except ValueError:
            home = Path.home()
            try:
                return "~/" + self.path.relative_to(home).as_posix()
            except ValueError:
                return str(self.path)

    def matches(self, relative: str) -> bool:
        """Whether this rule applies to a file (a workspace-relative POSIX path)."""
        if self.folder:
            return relative == self.folder or relative.startswith(self.folder + "/")
        return any(_glob_match(relative, pattern) for pattern in self.patterns)


@dataclass
class Rules:
    """The rules found for a workspace, and the files that could not be read as rules."""

    rules: list[Rule] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def always(self) -> list[Rule]:
        """The rules sent with every request, identical text once."""
        return _unique(rule for rule in self.rules if rule.apply == ALWAYS)

    def on_request(self) -> list[Rule]:
        """The rules the model may read when their description fits its task."""
        return [rule for rule in self.rules if rule.apply == ON_REQUEST]

    def for_paths(self, paths: Iterable[str], sent: set[str]) -> list[Rule]:
        """The conditional rules that the touched paths call for and that were not sent yet.

        `sent` holds the digests already sent in this conversation (the always-on rules'
        among them); it is updated with those returned.
        """
        touched = list(paths)
        found: list[Rule] = []
        for rule in self.rules:
            if rule.apply != GLOBS or rule.digest in sent:
                continue
            if any(rule.matches(path) for path in touched):
                sent.add(rule.digest)
                found.append(rule)
        return found


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as the editors' rule files mean it.

    `**/` is any folders (none too), `*` stays inside one folder, `?` is one character,
    `{a,b}` is either.
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            choices = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(re.escape(c) for c in choices) + ")")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def _glob_match(relative: str, pattern: str) -> bool:
    pattern = pattern.strip().removeprefix("./").removeprefix("/")
    if not pattern:
        return False
    if "/" not in pattern.rstrip("/"):
        # A bare name or `*.py` matches at any depth, as .gitignore-style rules do.
        pattern = "**/" + pattern
    return _glob_regex(pattern).fullmatch(relative) is not None


def _unique(rules: Iterable[Rule]) -> list[Rule]:
    seen: set[str] = set()
    kept: list[Rule] = []
    for rule in rules:
        if rule.text.strip() and rule.digest not in seen:
            seen.add(rule.digest)
            kept.append(rule)
    return kept


def _front_matter_rule(path: Path, rules: Rules) -> tuple[dict[str, object], str] | None:
    try:
        return split_front_matter(read_text(path))
    except FrontMatterError as exc:
        rules.problems.append(f"{path}: {exc}; left out")
        return None
    except OSError as exc:
        rules.problems.append(f"{path}: cannot be read: {exc.strerror or exc}; left out")
        return None


def _truthy(value: object) -> bool:
    return value is True or str(value).strip().lower() in ("true", "yes", "1")


def _cursor_rule(path: Path, rules: Rules) -> None:
    found = _front_matter_rule(path, rules)
    if found is None:
        return
    meta, body = found
    patterns = tuple(globs(meta.get("globs")))
    description = str(meta.get("description") or "").strip()
    if _truthy(meta.get("alwaysApply")):
        apply = ALWAYS
    elif patterns:
        apply = GLOBS
    elif description:
        apply = ON_REQUEST
    else:
        apply = MANUAL
    rules.rules.append(Rule(path, body, "workspace", apply, patterns, description))


def _instructions_rule(path: Path, rules: Rules) -> None:
    found = _front_matter_rule(path, rules)
    if found is None:
        return
    meta, body = found
    patterns = tuple(globs(meta.get("applyTo")))
    description = str(meta.get("description") or "").strip()
    if any(p.strip() in ("**", "*", "**/*") for p in patterns):
        apply = ALWAYS
    elif patterns:
        apply = GLOBS
    else:
        apply = MANUAL
    rules.rules.append(Rule(path, body, "workspace", apply, patterns, description))


def _plain_or_matter_rule(path: Path, rules: Rules, key: str = "globs") -> None:
    """A Continue or Cline rule: always, unless its front matter narrows it to globs/paths."""
    found = _front_matter_rule(path, rules)
    if found is None:
        return
    meta, body = found
    patterns = tuple(globs(meta.get(key)))
    description = str(meta.get("description") or "").strip()
    if patterns and not _truthy(meta.get("alwaysApply")):
        apply = GLOBS
    elif "alwaysApply" in meta and not _truthy(meta.get("alwaysApply")):
        apply = ON_REQUEST if description else MANUAL
    else:
        apply = ALWAYS
    rules.rules.append(Rule(path, body, "workspace", apply, patterns, description))


def _subfolder_agents(root: Path) -> list[Path]:
    """AGENTS.md files below the root, nearest the root first, skipping tool folders."""
    found: list[Path] = []
    frontier = [root]
    for _depth in range(_MAX_SUBFOLDER_DEPTH):
        below: list[Path] = []
        for folder in frontier:
            try:
                children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
            except OSError:
                continue
            for child in children:
                if child.name in _SKIPPED_DIRS or child.name.startswith("."):
                    continue
                candidate = child / "AGENTS.md"
                if inside(root, candidate):
                    found.append(candidate)
                below.append(child)
        frontier = below
    return found


def find_rules(root: Path, *, user: bool = True) -> Rules:
    """Every rules file for this workspace (and the person's own), in the documented order."""
    rules = Rules()
    if user:
        mine = user_config_dir() / "AGENTS.md"
        if mine.is_file():
            rules.rules.append(Rule(mine, read_text(mine), "user"))
    for name in _ROOT_FILES:
        path = root / name
        if inside(root, path):
            rules.rules.append(Rule(path, read_text(path), "workspace"))
    cline = root / ".clinerules"
    if inside(root, cline):
        _plain_or_matter_rule(cline, rules, key="paths")
    elif cline.is_dir():
        for path in sorted(cline.glob("*.md")):
            if inside(root, path):
                _plain_or_matter_rule(path, rules, key="paths")
    for path in sorted((root / ".continue" / "rules").glob("*.md")):
        if inside(root, path):
            _plain_or_matter_rule(path, rules)
    for path in sorted((root / ".cursor" / "rules").glob("*.mdc")):
        if inside(root, path):
            _cursor_rule(path, rules)
    for path in sorted((root / ".github" / "instructions").glob("*.instructions.md")):
        if inside(root, path):
            _instructions_rule(path, rules)
    for path in _subfolder_agents(root):
        folder = path.parent.relative_to(root).as_posix()
        rules.rules.append(Rule(path, read_text(path), "workspace", GLOBS, folder=folder))
    return rules


def rules_section(rules: list[Rule], root: Path) -> str:
    """Rules as one block of the system prompt, each under the file it came from."""
    return "\n\n".join(
        f"# Project rules ({rule.label(root)})\n\n{rule.text.strip()}" for rule in rules
    )


def on_request_section(rules: list[Rule], root: Path) -> str:
    """The rules the model may read, one line each: file and description."""
    if not rules:
        return ""
    lines = [
        "# Rules to read when they fit",
        "Read a file below with `read_file` when its description fits the task.",
    ]
    lines += [f"- {rule.label(root)}: {rule.description}" for rule in rules]
    return "\n".join(lines)


def attached_note(rules: list[Rule], root: Path) -> str:
    """Conditional rules as the note that goes with the result of the call that called them."""
    return "\n\n".join(
        f"[rules for this part of the project, from {rule.label(root)}]\n{rule.text.strip()}"
        for rule in rules
    )
