"""Hooks in the shape Claude Code, Codex and Gemini CLI share, run as real programs."""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path

import pytest

from toolgate.customize.hooks import HookError, HookRunner, parse_hooks, settings_hooks


def runner(
    root: Path, event: str, command: str, matcher: str = "", timeout: float = 10
) -> HookRunner:
    table = {
        event: [
            {
                "matcher": matcher,
                "hooks": [{"type": "command", "command": command, "timeout": timeout}],
            }
        ]
    }
    return HookRunner(parse_hooks(table, "test"), root)


def fire(hooks: HookRunner, event: str, **kwargs):
    fields = kwargs.pop("fields", {})
    return asyncio.run(hooks.fire(event, fields, **kwargs))


def test_a_claude_code_hook_blocks_an_edit_with_its_reason(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Edit|Write",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": 'cat > "$CLAUDE_PROJECT_DIR/seen.json"; '
                                    "echo 'generated files are not edited by hand' >&2; exit 2",
                                }
                            ],
                        }
                    ]
                }
            }
        )
    )
    hooks = HookRunner(settings_hooks(settings), tmp_path)
    outcome = fire(
        hooks,
        "PreToolUse",
        tool_name="edit_file",
        kind="change",
        fields={"session_id": "s1", "tool_input": {"path": "gen.py"}},
    )
    assert outcome.blocked
    assert outcome.reason == "generated files are not edited by hand"
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["hook_event_name"] == "PreToolUse"
    assert seen["tool_name"] == "edit_file"
    assert seen["cwd"] == str(tmp_path) and seen["session_id"] == "s1"
    # A read is not an edit: the hook does not run.
    (tmp_path / "seen.json").unlink()
    assert not fire(hooks, "PreToolUse", tool_name="read_file", kind="read").blocked
    assert not (tmp_path / "seen.json").exists()


def test_json_decisions_and_context(tmp_path: Path) -> None:
    deny = runner(
        tmp_path,
        "PreToolUse",
        "echo "
        + shlex.quote(
            json.dumps(
                {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "no commits on Fridays",
                    }
                }
            )
        ),
    )
    outcome = fire(deny, "PreToolUse", tool_name="git_commit", kind="git")
    assert outcome.decision == "deny" and outcome.reason == "no commits on Fridays"
    ask = runner(tmp_path, "PreToolUse", """echo '{"decision": "ask", "reason": "check it"}'""")
    assert fire(ask, "PreToolUse", tool_name="write_file", kind="change").decision == "ask"
    context = runner(tmp_path, "UserPromptSubmit", "echo 'The build uses make.'")
    assert fire(context, "UserPromptSubmit").context == ["The build uses make."]
    extra = runner(
        tmp_path,
        "PostToolUse",
        "echo "
        + shlex.quote(
            json.dumps(
                {
                    "hookSpecificOutput": {
                        "hookEventName": "PostToolUse",
                        "additionalContext": "formatted",
                    }
                }
            )
        ),
    )
    assert fire(extra, "PostToolUse", tool_name="write_file", kind="change").context == [
        "formatted"
    ]


@pytest.mark.parametrize(
    ("command", "timeout", "says"),
    [
        ("exit 3", 10, "failed (exit 3)"),
        ("sleep 5", 0.3, "took longer than 0.3 s"),
        ("echo '{not json'", 10, "cannot be read"),
        ('echo \'{"decision": "maybe"}\'', 10, "'maybe'"),
    ],
)
def test_a_broken_hook_is_one_line_and_the_turn_goes_on(
    tmp_path: Path, command: str, timeout: float, says: str
) -> None:
    hooks = runner(tmp_path, "PreToolUse", command, timeout=timeout)
    outcome = fire(hooks, "PreToolUse", tool_name="write_file", kind="change")
    assert outcome.decision is None
    assert len(outcome.problems) == 1 and says in outcome.problems[0]


def test_the_strongest_word_wins(tmp_path: Path) -> None:
    table = {
        "PreToolUse": [
            {"hooks": [{"type": "command", "command": 'echo \'{"decision": "approve"}\''}]},
            {"hooks": [{"type": "command", "command": "echo nope >&2; exit 2"}]},
        ]
    }
    outcome = fire(HookRunner(parse_hooks(table, "t"), tmp_path), "PreToolUse", tool_name="x")
    assert outcome.decision == "deny" and outcome.reason == "nope"


@pytest.mark.parametrize(
    ("table", "where"),
    [
        ({"Before": []}, "hooks.Before"),
        ({"PreToolUse": {}}, "hooks.PreToolUse"),
        ({"PreToolUse": [{"hooks": [{"type": "prompt", "command": "x"}]}]}, ".type"),
        ({"PreToolUse": [{"hooks": [{"command": ""}]}]}, ".command"),
        ({"PreToolUse": [{"hooks": [{"command": "x", "timeout": -1}]}]}, ".timeout"),
    ],
)
def test_a_wrong_shape_names_where(table: dict, where: str) -> None:
    with pytest.raises(HookError, match=where.replace(".", r"\.").replace("[", r"\[")):
        parse_hooks(table, "settings.json")


def test_the_matcher_knows_other_agents_names_by_kind(tmp_path: Path) -> None:
    hooks = parse_hooks({"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "true"}]}]}, "t")
    assert hooks[0].matches("run_tests", "run")
    assert not hooks[0].matches("read_file", "read")
    named = parse_hooks(
        {"PreToolUse": [{"matcher": "write_file", "hooks": [{"command": "true"}]}]}, "t"
    )
    assert named[0].matches("write_file", "change") and not named[0].matches("git_add", "git")
