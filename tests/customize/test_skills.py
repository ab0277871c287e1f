"""Agent Skills: SKILL.md folders listed by name and description, malformed ones named."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolgate.customize.skills import find_skills, loaded_text, skills_section


def skill(base: Path, name: str, front: str, body: str = "Do the thing.") -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{front}\n---\n{body}\n", "utf-8")
    return folder


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def test_skills_from_every_folder_with_their_fields(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "ws"
    folder = skill(
        root / ".agents/skills",
        "release-notes",
        "name: release-notes\ndescription: Write release notes.\nallowed-tools: Read Edit\n"
        "license: MIT\nmetadata:\n  version: '1'",
    )
    (folder / "references").mkdir()
    (folder / "references" / "style.md").write_text("style", "utf-8")
    skill(root / ".claude/skills", "pdf", "name: pdf\ndescription: Read PDFs.")
    skill(root / ".github/skills", "api", "name: api\ndescription: The API's conventions.")
    skill(home / ".agents/skills", "mine", "name: mine\ndescription: My own.")
    found = find_skills(root)
    assert [(s.name, s.source) for s in found.skills] == [
        ("release-notes", "workspace"),
        ("pdf", "workspace"),
        ("api", "workspace"),
        ("mine", "user"),
    ]
    first = found.skills[0]
    assert first.allowed_tools == ("Read", "Edit")
    assert first.metadata == (("version", "1"),)
    assert first.files() == ["references/style.md"]
    text = loaded_text(first)
    assert "Do the thing." in text and "references/style.md" in text and "Read, Edit" in text
    assert first.file("references/style.md").read_text() == "style"
    with pytest.raises(ValueError):
        first.file("../pdf/SKILL.md")
    assert found.problems == []


@pytest.mark.parametrize(
    ("front", "field"),
    [
        ("description: no name", "name"),
        ("name: Bad_Name\ndescription: x", "name"),
        ("name: other\ndescription: x", "name"),
        ("name: broken", "description"),
        ("name: broken\ndescription: '" + "x" * 1025 + "'", "description"),
        ("name: [unclosed", "front matter"),
    ],
)
def test_a_malformed_skill_is_named_with_file_and_field(
    tmp_path: Path, home: Path, front: str, field: str
) -> None:
    root = tmp_path / "ws"
    skill(root / ".agents/skills", "broken", front)
    skill(root / ".agents/skills", "good", "name: good\ndescription: Fine.")
    found = find_skills(root)
    assert [s.name for s in found.skills] == ["good"]
    assert len(found.problems) == 1
    assert "broken/SKILL.md" in found.problems[0] and f": {field}:" in found.problems[0]


def test_the_prompt_lists_names_and_descriptions_not_bodies(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "ws"
    for n in range(20):
        skill(root / ".agents/skills", f"s{n}", f"name: s{n}\ndescription: Skill {n}.", "B" * 4000)
    found = find_skills(root)
    section = skills_section(found.skills)
    assert len(found.skills) == 20
    assert "- s7: Skill 7." in section
    assert "BBBB" not in section
    assert len(section) < 1500
