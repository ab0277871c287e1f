"""AGENTS.md, skills and profiles reach the model: checked in the requests it received."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.engine.helpers import answer, build, drive, results_read, system_text, tool_names
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.config import ConfigError


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("mode", ["native", "text"])
async def test_agents_md_and_skills_reach_the_system_prompt(
    repo: Path, scripted: ScriptedModel, mode: str
) -> None:
    _write(repo / "AGENTS.md", "Always run the tests with `-x`. Marker: AGENTS-7731.\n")
    _write(repo / ".agent" / "skills" / "release.md", "To release, call run_tests first. R-42.\n")
    _write(repo / ".agent" / "skills" / "api.md", "The API lives in api/. A-17.\n")
    _write(repo / ".agent" / "skills" / "notes.txt", "not a skill N-99\n")
    scripted.script = [answer()]
    await drive(repo, scripted, overrides={"tool_calling": {"mode": mode}})
    prompt = system_text(scripted.requests[0])
    assert "AGENTS-7731" in prompt
    assert "# Skill: api" in prompt and "# Skill: release" in prompt
    assert prompt.index("A-17") < prompt.index("R-42")
    assert "N-99" not in prompt
    if mode == "text":
        assert "TOOLS:" in prompt


async def test_reviewer_profile_offers_read_only_tools_and_tests(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [tool_call("write_file", path="x.txt", content="x"), answer()]
    driven = await drive(repo, scripted, overrides={"profile": "reviewer"})
    assert sorted(tool_names(scripted.requests[0])) == sorted(
        ["read_file", "list_directory", "search_code", "git_status", "run_tests", "final_answer"]
    )
    assert "weaknesses" in system_text(scripted.requests[0])
    (result,) = results_read(scripted)
    assert "unknown tool 'write_file'" in result["error"]
    assert not (repo / "x.txt").exists()
    assert driven.log.get("profile") == "reviewer"


@pytest.mark.parametrize(
    "tools_line", ["tools: read_file, search_code", 'tools: ["read_file", "search_code"]']
)
async def test_workspace_profile(repo: Path, scripted: ScriptedModel, tools_line: str) -> None:
    _write(
        repo / ".agent" / "profiles" / "docs.md",
        f"---\n{tools_line}\n---\nYou write documentation. D-55.\n",
    )
    scripted.script = [answer()]
    await drive(repo, scripted, overrides={"profile": "docs"})
    assert tool_names(scripted.requests[0]) == ["read_file", "search_code", "final_answer"]
    prompt = system_text(scripted.requests[0])
    assert "D-55" in prompt and "tools:" not in prompt and "---" not in prompt


async def test_profile_from_the_workspace_config(repo: Path, scripted: ScriptedModel) -> None:
    _write(repo / ".toolgate" / "config.toml", 'profile = "reviewer"\n')
    scripted.script = [answer()]
    await drive(repo, scripted)
    assert "write_file" not in tool_names(scripted.requests[0])


@pytest.mark.parametrize("name", ["nonexistent", "../../../outside/notes", "ABSOLUTE"])
async def test_unknown_profile_is_a_config_error(
    repo: Path, scripted: ScriptedModel, name: str
) -> None:
    # a file outside .agent/profiles/ is never read as a profile (it would reach the model)
    notes = repo.parent / "outside" / "notes.md"
    _write(notes, "---\ntools: read_file\n---\nSECRET NOTES\n")
    _write(repo / ".agent" / "profiles" / "docs.md", "Docs.\n")
    name = str(notes.with_suffix("")) if name == "ABSOLUTE" else name
    with pytest.raises(ConfigError, match="profile"):
        await build(repo, scripted, overrides={"profile": name})
    assert scripted.requests == []


async def test_instructions_linked_from_outside_are_not_read(
    repo: Path, scripted: ScriptedModel
) -> None:
    # A repository cannot make Toolgate send the person's other files to the model.
    outside = repo.parent / "outside"
    _write(outside / "credentials", "aws_secret=OUT-1\n")
    _write(outside / "notes.md", "---\ntools: read_file\n---\nOUT-2\n")
    (repo / "AGENTS.md").symlink_to(outside / "credentials")
    (repo / ".agent" / "skills").mkdir(parents=True)
    (repo / ".agent" / "skills" / "s.md").symlink_to(outside / "credentials")
    _write(repo / ".agent" / "skills" / "fine.md", "IN-1\n")
    (repo / ".agent" / "profiles").mkdir(parents=True)
    (repo / ".agent" / "profiles" / "p.md").symlink_to(outside / "notes.md")
    scripted.script = [answer()]
    await drive(repo, scripted)
    prompt = system_text(scripted.requests[0])
    assert "IN-1" in prompt and "OUT-1" not in prompt
    with pytest.raises(ConfigError, match="unknown profile"):
        await build(repo, scripted, overrides={"profile": "p"})
