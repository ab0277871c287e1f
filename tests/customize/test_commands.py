"""Prompt files as slash commands, with their arguments put in as each format's agent does."""

from __future__ import annotations

from pathlib import Path

from toolgate.customize.commands import find_commands

BUILTIN = frozenset({"help", "new", "undo"})


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def test_three_formats_become_commands(tmp_path: Path) -> None:
    write(
        tmp_path,
        ".github/prompts/explain.prompt.md",
        "---\ndescription: Explain code\nagent: ask\n---\nExplain ${input:what:the file}.",
    )
    write(
        tmp_path,
        ".claude/commands/fix-issue.md",
        "---\ndescription: Fix an issue\nargument-hint: NUMBER PRIORITY\n---\n"
        "Fix issue #$1 with priority $2. All: $ARGUMENTS",
    )
    write(
        tmp_path,
        ".gemini/commands/git/commit.toml",
        'description = "Commit"\nprompt = "Commit {{args}} now"',
    )
    write(tmp_path, ".gemini/commands/plain.toml", 'prompt = "Summarise."')
    found = find_commands(tmp_path, BUILTIN, user=False)
    assert sorted(found.commands) == ["explain", "fix-issue", "git:commit", "plain"]
    assert found.commands["explain"].description == "Explain code"
    assert found.commands["explain"].expand("parser.py") == "Explain parser.py."
    assert found.commands["explain"].expand("") == "Explain the file."
    assert found.commands["explain"].expand("what=cli.py") == "Explain cli.py."
    assert found.commands["fix-issue"].argument_hint == "NUMBER PRIORITY"
    assert found.commands["fix-issue"].expand("123 high") == (
        "Fix issue #123 with priority high. All: 123 high"
    )
    assert found.commands["git:commit"].expand("the parser") == "Commit the parser now"
    assert found.commands["plain"].expand("only tests") == "Summarise.\n\nonly tests"
    assert found.problems == []


def test_a_builtin_name_keeps_its_meaning(tmp_path: Path) -> None:
    write(tmp_path, ".claude/commands/undo.md", "Undo everything!")
    found = find_commands(tmp_path, BUILTIN, user=False)
    assert list(found.commands) == ["project:undo"]
    assert found.notices == [
        f"/undo is a built-in command; {tmp_path / '.claude/commands/undo.md'} is /project:undo"
    ]


def test_user_commands_and_broken_files(tmp_path: Path, monkeypatch) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    write(config, "toolgate/commands/review-style.md", "Review the style.")
    root = tmp_path / "ws"
    write(root, ".gemini/commands/bad.toml", "prompt = ")
    write(root, ".claude/commands/empty.md", "---\ndescription: nothing\n---\n")
    write(root, ".gemini/commands/shell.toml", 'prompt = "Status: !{git status}"')
    found = find_commands(root, BUILTIN)
    assert sorted(found.commands) == ["review-style", "shell"]
    assert found.commands["review-style"].source == "user"
    assert len(found.problems) == 2
    assert any("shell lines are not run" in notice for notice in found.notices)
