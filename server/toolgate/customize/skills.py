"""Agent Skills in the open `SKILL.md` format: listed by name and description, read on demand.

A skill is a folder holding `SKILL.md`: YAML front matter with `name` and `description`
(required), optionally `license`, `compatibility`, `allowed-tools` and `metadata`, then a
Markdown body. The folder may hold more files (references, scripts, assets). The model sees
each skill's name and description only; it reads a body, and the skill's other files, with the
`load_skill` tool when it decides the skill applies — so twenty skills cost a few hundred
tokens of a small window, not twenty bodies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from toolgate.customize.frontmatter import FrontMatterError, split_front_matter, words
from toolgate.customize.places import home, read_text

SKILL_FILE = "SKILL.md"
WORKSPACE_FOLDERS = (".agents/skills", ".claude/skills", ".github/skills")
USER_FOLDERS = (".agents/skills", ".claude/skills")

_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_MAX_NAME = 64
_MAX_DESCRIPTION = 1024
_MAX_COMPATIBILITY = 500
# Files of a skill's folder listed for the model: enough to find a reference, not a dump.
_MAX_LISTED_FILES = 50


@dataclass(frozen=True)
class Skill:
    """One valid skill."""

    name: str
    description: str
    folder: Path
    source: str  # "workspace" or "user"
    allowed_tools: tuple[str, ...] = ()
    license: str = ""
    metadata: tuple[tuple[str, str], ...] = ()

    @property
    def path(self) -> Path:
        """The skill's `SKILL.md`."""
        return self.folder / SKILL_FILE

    def body(self) -> str:
        """The instructions under the front matter (read when the model loads the skill)."""
        _meta, body = split_front_matter(read_text(self.path, limit=256_000))
        return body.strip()

    def files(self) -> list[str]:
        """The skill's other files, relative to its folder."""
        listed: list[str] = []
        for path in sorted(self.folder.rglob("*")):
            if path.is_file() and path.name != SKILL_FILE and not path.is_symlink():
                listed.append(path.relative_to(self.folder).as_posix())
                if len(listed) >= _MAX_LISTED_FILES:
                    break
        return listed

    def file(self, relative: str) -> Path:
        """One of the skill's files; ValueError for a path that leaves the folder."""
        candidate = (self.folder / relative).resolve()
        folder = self.folder.resolve()
        if folder not in candidate.parents or not candidate.is_file():
            raise ValueError(f"{relative!r} is not a file of skill {self.name!r}")
        return candidate


@dataclass
class Skills:
    """The skills found, and each malformed one named with its file and field."""

    skills: list[Skill] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def named(self, name: str) -> Skill | None:
        """The skill of that name, if one was found."""
        return next((skill for skill in self.skills if skill.name == name), None)


def _problem(path: Path, where: str, rule: str) -> str:
    return f"{path}: {where}: {rule}; this skill is left out"


def read_skill(folder: Path, source: str) -> Skill | str:
    """The skill in `folder`, or a one-line problem naming its file and field."""
    path = folder / SKILL_FILE
    try:
        meta, _body = split_front_matter(read_text(path, limit=256_000))
    except FrontMatterError as exc:
        return _problem(path, "front matter", str(exc))
    except OSError as exc:
        return _problem(path, "file", f"cannot be read ({exc.strerror or exc})")
    name = meta.get("name")
    if not isinstance(name, str) or not name.strip():
        return _problem(path, "name", "a required field, missing")
    if len(name) > _MAX_NAME or not _NAME.match(name):
        return _problem(
            path, "name", f"{name!r} must be 1-64 lowercase letters, digits and single hyphens"
        )
    if name != folder.name:
        return _problem(path, "name", f"{name!r} must match its folder's name {folder.name!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        return _problem(path, "description", "a required field, missing")
    if len(description) > _MAX_DESCRIPTION:
        return _problem(path, "description", f"at most {_MAX_DESCRIPTION} characters")
    compatibility = meta.get("compatibility")
    if compatibility is not None and len(str(compatibility)) > _MAX_COMPATIBILITY:
        return _problem(path, "compatibility", f"at most {_MAX_COMPATIBILITY} characters")
    metadata = meta.get("metadata") or {}
    if not isinstance(metadata, dict):
        return _problem(path, "metadata", "a mapping of names to strings")
    return Skill(
        name=name,
        description=" ".join(description.split()),
        folder=folder,
        source=source,
        allowed_tools=tuple(words(meta.get("allowed-tools"))),
        license=str(meta.get("license") or ""),
        metadata=tuple((str(k), str(v)) for k, v in metadata.items()),
    )


def skill_folders(root: Path, *, user: bool = True) -> list[tuple[Path, str]]:
    """The folders skills are looked for in, the workspace's first (its skill wins a clash)."""
    folders = [(root / name, "workspace") for name in WORKSPACE_FOLDERS]
    if user:
        folders += [(home() / name, "user") for name in USER_FOLDERS]
    return folders


def find_skills(root: Path, *, user: bool = True) -> Skills:
    """Every skill for this workspace and person; a name found twice keeps the first."""
    found = Skills()
    for base, source in skill_folders(root, user=user):
        if not base.is_dir():
            continue
        for folder in sorted(p for p in base.iterdir() if (p / SKILL_FILE).is_file()):
            skill = read_skill(folder, source)
            if isinstance(skill, str):
                found.problems.append(skill)
            elif found.named(skill.name) is not None:
                kept = found.named(skill.name)
                assert kept is not None
                found.problems.append(
                    f"{skill.path}: skill {skill.name!r} is also in {kept.path}; the first is used"
                )
            else:
                found.skills.append(skill)
    return found


def skills_section(skills: list[Skill]) -> str:
    """The system prompt's list of skills: a name and a description each, no bodies."""
    if not skills:
        return ""
    lines = [
        "# Skills",
        "Each skill below holds instructions for one kind of task. When one fits the task, "
        "call `load_skill` with its name first and follow what it says.",
    ]
    lines += [f"- {skill.name}: {skill.description}" for skill in skills]
    return "\n".join(lines)


def loaded_text(skill: Skill) -> str:
    """What `load_skill` answers: the body, and the skill's other files to read on demand."""
    parts = [f"# Skill: {skill.name}", skill.body()]
    files = skill.files()
    if files:
        parts.append(
            "Files of this skill (read one with load_skill and `file`):\n"
            + "\n".join(f"- {name}" for name in files)
        )
    if skill.allowed_tools:
        parts.append(
            "While you follow this skill, use only these tools: " + ", ".join(skill.allowed_tools)
        )
    return "\n\n".join(parts)
