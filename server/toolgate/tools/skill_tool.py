"""load_skill: the model reads a skill's instructions, or one of its files, when it needs them.

Offered only when the workspace or the person has skills (`toolgate.customize.skills`). A read:
it runs at once, and reads nothing outside the skills' own folders.
"""

from __future__ import annotations

from typing import Any

from toolgate.customize.places import read_text
from toolgate.customize.skills import Skills, loaded_text
from toolgate.records import ToolResult
from toolgate.tools.activity import ActivityContext
from toolgate.tools.schema import Tool, object_schema

LOAD_SKILL = "load_skill"


def load_skill_tool(skills: Skills) -> Tool:
    """The tool, its `name` limited to the skills there are."""
    names = [skill.name for skill in skills.skills]
    return Tool(
        name=LOAD_SKILL,
        description=(
            "Read the instructions of a skill listed under '# Skills' before you do a task it "
            "fits; with `file`, read one of the skill's own files."
        ),
        parameters=object_schema(
            {
                "name": {"type": "string", "enum": names, "description": "The skill's name."},
                "file": {
                    "type": "string",
                    "description": "A file of the skill, relative to its folder (optional).",
                },
            },
            ["name"],
        ),
        output={
            "type": "object",
            "properties": {"skill": {"type": "string"}, "content": {"type": "string"}},
        },
        label="read the skill {name}",
    )


class LoadSkill:
    """The activity: a skill's body with its files listed, or one file's text."""

    def __init__(self, skills: Skills) -> None:
        self.skills = skills

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Read the skill (or its file)."""
        skill = self.skills.named(str(args.get("name", "")))
        if skill is None:
            known = ", ".join(s.name for s in self.skills.skills) or "none"
            return ToolResult.fail(f"no skill named {args.get('name')!r}; skills: {known}")
        relative = args.get("file")
        try:
            if relative:
                text = read_text(skill.file(str(relative)), limit=256_000)
            else:
                text = loaded_text(skill)
        except (OSError, ValueError) as exc:
            return ToolResult.fail(str(exc), suggestions=[f"Files: {', '.join(skill.files())}"])
        return ToolResult.ok(
            {"skill": skill.name, "content": text}, output_size_bytes=len(text.encode())
        )
