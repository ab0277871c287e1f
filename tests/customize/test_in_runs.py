"""Rules, skills and hooks at work in real runs against the scripted model."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import (
    answer,
    ask_in_session,
    drive,
    results_read,
    system_text,
    tool_names,
)
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.config import load_config
from toolgate.session import SessionService, SetupError
from toolgate.trust import TrustStore

CLAUDE_HOOK = {
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [
                    {
                        "type": "command",
                        "command": "touch hook-ran; echo 'src/gen.py is generated: edit "
                        "templates/gen.j2 instead' >&2; exit 2",
                    }
                ],
            }
        ]
    }
}


def load_skill(name: str) -> dict[str, Any]:
    """A script entry calling load_skill (whose argument is called `name`, as tool_call's is)."""
    return {"tool_calls": [{"name": "load_skill", "arguments": {"name": name}}]}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


async def test_a_claude_code_hook_blocks_edit_file_once_confirmed(
    repo: Path, scripted: ScriptedModel
) -> None:
    write(repo / ".claude/settings.json", json.dumps(CLAUDE_HOOK))
    write(repo / "src/gen.py", "x = 1\n")
    edit = tool_call("edit_file", path="src/gen.py", search="x = 1", replace="x = 2")
    # Not confirmed: the hook does not run, and the edit goes through the gate as always.
    scripted.script = [edit, answer()]
    await drive(repo, scripted)
    assert not (repo / "hook-ran").exists()
    assert (repo / "src/gen.py").read_text() == "x = 2\n"
    # Confirmed: it runs, blocks, and the model reads its reason.
    write(repo / "src/gen.py", "x = 1\n")
    [waiting] = [t for t in load_config(repo).pending_trust if t.key.startswith("hooks.")]
    TrustStore().confirm(repo, [waiting.fingerprint])
    scripted.script = [edit, answer()]
    await drive(repo, scripted)
    assert (repo / "hook-ran").exists()
    assert (repo / "src/gen.py").read_text() == "x = 1\n"
    (result,) = results_read(scripted)
    assert not result["success"]
    assert "src/gen.py is generated: edit templates/gen.j2 instead" in result["error"]
    # A read is no edit: the hook does not block it.
    (repo / "hook-ran").unlink()
    scripted.script = [tool_call("read_file", path="src/gen.py"), answer()]
    await drive(repo, scripted)
    assert not (repo / "hook-ran").exists()
    assert results_read(scripted)[0]["success"]


async def test_rules_reach_the_prompt_and_glob_rules_follow_the_files(
    repo: Path, scripted: ScriptedModel
) -> None:
    write(repo / "CLAUDE.md", "Use four spaces. Marker CL-1.")
    write(repo / "AGENTS.md", "Use four spaces. Marker CL-1.")  # identical: sent once
    write(repo / ".github/copilot-instructions.md", "Marker CP-2.")
    write(
        repo / ".cursor/rules/api.mdc",
        "---\nglobs: api/**/*.py\n---\nAPI handlers return dicts. Marker AP-3.",
    )
    write(repo / "api/handlers.py", "def get():\n    return {}\n")
    write(repo / "README.md", "hello\n")
    scripted.script = [
        tool_call("read_file", path="README.md"),
        tool_call("read_file", path="api/handlers.py"),
        tool_call("read_file", path="api/handlers.py"),
        answer(),
    ]
    driven = await drive(repo, scripted)
    prompt = system_text(scripted.requests[0])
    assert prompt.count("Marker CL-1") == 1 and "Marker CP-2" in prompt
    assert "AP-3" not in prompt
    readme, handlers, again = results_read(scripted)
    assert "notes" not in readme
    assert "AP-3" in handlers["notes"][0] and ".cursor/rules/api.mdc" in handlers["notes"][0]
    assert "notes" not in again  # once per run
    # Which rules the turn used: the prompt's when it starts, the attached one when attached,
    # all of them in the account (the terminal, the editors and the run log show it).
    (started,) = driven.of_type("run_started")
    always = started["rules"]
    assert ".github/copilot-instructions.md" in always and len(always) == 2, always
    assert {"CLAUDE.md", "AGENTS.md"} & set(always)
    (attached,) = driven.of_type("rules_used")
    assert attached["rules"] == [".cursor/rules/api.mdc"]
    assert driven.log["account"]["rules"] == [*always, ".cursor/rules/api.mdc"]


async def test_a_stored_turn_still_names_the_rules_it_used(
    repo: Path, scripted: ScriptedModel
) -> None:
    # A chat view drawn again from the session file (after a reload) shows each turn's rules.
    write(repo / "AGENTS.md", "Marker AG-1.")
    write(repo / ".cursor/rules/api.mdc", "---\nglobs: api/**/*.py\n---\nMarker AP-3.")
    write(repo / "api/handlers.py", "def get():\n    return {}\n")
    scripted.script = [tool_call("read_file", path="api/handlers.py"), answer(), answer()]
    service = SessionService(repo, lambda: load_config(repo))
    session_id, _ = await ask_in_session(service, scripted, repo, "Look at the API.", None)
    write(repo / "AGENTS.md", "Marker AG-2.")  # later turns may read other rules
    await ask_in_session(service, scripted, repo, "Thanks.", session_id)
    asked = [e for e in service.load(session_id)["transcript"] if e["kind"] == "user"]
    assert [e.get("rules") for e in asked] == [
        ["AGENTS.md", ".cursor/rules/api.mdc"],
        ["AGENTS.md"],
    ]


def twenty_skills(repo: Path) -> None:
    for n in range(20):
        write(
            repo / f".agents/skills/skill-{n}/SKILL.md",
            f"---\nname: skill-{n}\ndescription: Does task {n}.\n---\n" + f"BODY-{n} " * 300,
        )
    write(repo / ".agents/skills/broken/SKILL.md", "---\ndescription: no name\n---\nx")


async def test_twenty_skills_in_a_small_window_send_names_not_bodies(
    repo: Path, scripted: ScriptedModel
) -> None:
    twenty_skills(repo)
    scripted.script = [answer()]
    driven = await drive(repo, scripted, overrides={"model": {"context_tokens": 4000}})
    assert driven.outcome.status == "completed"
    first = scripted.requests[0]
    prompt = system_text(first)
    assert "- skill-7: Does task 7." in prompt and "BODY-" not in prompt
    assert "load_skill" in tool_names(first)
    notices = [e.fields["message"] for e in driven.events if e.type == "notice"]
    assert any("broken/SKILL.md: name: a required field, missing" in n for n in notices)


async def test_the_model_loads_a_skills_body_when_it_needs_it(
    repo: Path, scripted: ScriptedModel
) -> None:
    twenty_skills(repo)
    write(repo / ".agents/skills/skill-7/reference.md", "REFERENCE-TEXT")
    scripted.script = [
        load_skill("skill-7"),
        {
            "tool_calls": [
                {"name": "load_skill", "arguments": {"name": "skill-7", "file": "reference.md"}}
            ]
        },
        answer(),
    ]
    await drive(repo, scripted)
    body, reference = results_read(scripted)
    assert body["success"] and "BODY-7" in body["data"]["content"]
    assert "reference.md" in body["data"]["content"] and "BODY-8" not in body["data"]["content"]
    assert reference["data"]["content"] == "REFERENCE-TEXT"


async def test_a_skills_allowed_tools_narrow_what_the_model_may_call(
    repo: Path, scripted: ScriptedModel
) -> None:
    write(
        repo / ".agents/skills/read-only-audit/SKILL.md",
        "---\nname: read-only-audit\ndescription: Audit.\nallowed-tools: Read Grep\n---\nLook.",
    )
    scripted.script = [
        load_skill("read-only-audit"),
        tool_call("write_file", path="x.txt", content="x"),
        tool_call("read_file", path="README.md"),
        answer(),
    ]
    write(repo / "README.md", "hi\n")
    await drive(repo, scripted)
    _loaded, written, read = results_read(scripted)
    assert not written["success"] and "allows only: Read, Grep" in written["error"]
    assert not (repo / "x.txt").exists()
    assert read["success"]


def person_hooks(table: dict[str, Any]) -> None:
    """Hooks in the person's own configuration: they run without a confirmation."""
    config_home = Path(os.environ["XDG_CONFIG_HOME"])
    write(config_home / "toolgate/config.toml", toml_hooks(table))


def toml_hooks(table: dict[str, Any]) -> str:
    lines = []
    for event, groups in table.items():
        for group in groups:
            lines.append(f"[[hooks.{event}]]")
            lines.append(f"matcher = {json.dumps(group.get('matcher', ''))}")
            inner = ", ".join(
                '{ type = "command", command = ' + json.dumps(h["command"]) + " }"
                for h in group["hooks"]
            )
            lines.append(f"hooks = [{inner}]")
    return "\n".join(lines) + "\n"


async def test_prompt_and_session_hooks_add_context_and_stop_sends_back_to_work(
    repo: Path, scripted: ScriptedModel
) -> None:
    person_hooks(
        {
            "SessionStart": [{"hooks": [{"command": "echo 'Build with make. SS-1'"}]}],
            "UserPromptSubmit": [{"hooks": [{"command": "cat > prompt.json; echo UPS-2"}]}],
            "Stop": [
                {
                    "hooks": [
                        {
                            "command": "test -f stopped-once && exit 0; touch stopped-once; "
                            "echo 'run the tests first' >&2; exit 2"
                        }
                    ]
                }
            ],
        }
    )
    scripted.script = [answer("All done."), answer("Tests pass, done.")]
    driven = await drive(repo, scripted, task="Fix the greeting.")
    first_user = next(m for m in scripted.requests[0]["messages"] if m["role"] == "user")
    assert "SS-1" in first_user["content"] and "UPS-2" in first_user["content"]
    assert first_user["content"].rstrip().endswith("Fix the greeting.")
    assert json.loads((repo / "prompt.json").read_text())["prompt"] == "Fix the greeting."
    last_user = [m for m in scripted.requests[1]["messages"] if m["role"] == "user"][-1]
    assert last_user["content"] == "Not done yet: run the tests first"
    assert driven.outcome.answer == "Tests pass, done."


async def test_a_prompt_hook_can_block_the_turn(repo: Path, scripted: ScriptedModel) -> None:
    person_hooks(
        {"UserPromptSubmit": [{"hooks": [{"command": "echo 'no secrets in prompts' >&2; exit 2"}]}]}
    )
    scripted.script = [answer()]
    with pytest.raises(SetupError, match="no secrets in prompts"):
        await drive(repo, scripted)
    assert scripted.requests == []
