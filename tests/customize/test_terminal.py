"""The terminal front end: prompt commands in `toolgate run` and `toolgate chat`, config show."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import on_scripted, toolgate, toolgate_task
from tests.cli.terminal import Terminal
from tests.support.scripted_model import ScriptedModel

PROMPT = "› "


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def user_messages(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_run_takes_a_prompt_command(repo: Path, scripted: ScriptedModel) -> None:
    write(
        repo / ".claude/commands/fix-issue.md",
        "---\ndescription: Fix an issue\nargument-hint: NUMBER\n---\nFix issue #$1 now.",
    )
    scripted.script = [{"content": "Done."}]
    done = toolgate_task("run", "/fix-issue 42", repo, scripted, "--approve", "auto")
    assert done.returncode == 0, done.stderr
    assert user_messages(scripted.requests[0])[-1].endswith("Fix issue #42 now.")
    assert "/fix-issue: the prompt of .claude/commands/fix-issue.md" in done.stderr


def test_chat_lists_completes_and_runs_prompt_commands(repo: Path, scripted: ScriptedModel) -> None:
    write(
        repo / ".gemini/commands/git/summary.toml",
        'description = "Sum up"\nprompt = "Sum up {{args}}."',
    )
    write(repo / ".github/prompts/undo.prompt.md", "Undo it all.")  # a built-in's name
    scripted.script = [{"content": "Summed."}]
    with Terminal("chat", *on_scripted(repo, scripted), env={"NO_COLOR": "1"}) as term:
        term.expect(PROMPT)
        term.type("/help\r")
        listed = term.expect(PROMPT)
        assert "/git:summary  Sum up" in listed and "/project:undo" in listed
        term.type("/git:su\t")
        term.type(" the log\r")
        term.expect("Summed.")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
    assert user_messages(scripted.requests[0])[-1].endswith("Sum up the log.")


def test_config_show_lists_what_was_found(repo: Path) -> None:
    write(repo / "CLAUDE.md", "rules")
    write(repo / ".agents/skills/notes/SKILL.md", "---\nname: notes\ndescription: Notes.\n---\nx")
    write(repo / ".agents/skills/bad/SKILL.md", "---\nname: bad\n---\nx")
    write(repo / ".claude/commands/ship.md", "---\ndescription: Ship it\n---\nShip.")
    write(
        repo / ".claude/settings.json",
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "make lint"}]}]}}),
    )
    write(repo / ".mcp.json", json.dumps({"mcpServers": {"docs": {"command": "docs-srv"}}}))
    shown = toolgate("config", "show", "--workspace", str(repo))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "CLAUDE.md (always)" in out
    assert "notes: Notes. (.agents/skills/notes/SKILL.md)" in out
    assert "bad/SKILL.md: description: a required field, missing" in out
    assert "/ship: Ship it (.claude/commands/ship.md)" in out
    assert "Stop: make lint — waits for your confirmation (" in out
    assert "docs: waits for your confirmation (" in out
    as_json = json.loads(toolgate("config", "show", "--workspace", str(repo), "--json").stdout)
    assert [c["name"] for c in as_json["commands"]] == ["ship"]
    assert as_json["hooks"][0]["trusted"] is False
