"""The approval modes in the terminal: `toolgate run --mode` and `/mode` in `toolgate chat`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import on_scripted, toolgate_task
from tests.cli.terminal import Terminal
from tests.conftest import git
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

PROMPT = "› "


def _told(scripted: ScriptedModel) -> list[dict[str, object]]:
    """Every tool result the model read, in order."""
    return [
        json.loads(m["content"]) for m in scripted.requests[-1]["messages"] if m["role"] == "tool"
    ]


def test_run_read_only_refuses_what_is_not_a_read_even_with_approve_auto(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    scripted.script = [
        tool_call("read_file", path="README.md"),
        tool_call("run_tests"),
        tool_call("git_add", files=["test_ok.py"]),
        tool_call("edit_file", path="README.md", search="Tiny", replace="Huge"),
        {"content": "I only read."},
    ]
    done = toolgate_task(
        "run", "Do it.", repo, scripted, "--mode", "read-only", "--approve", "auto"
    )
    assert done.returncode == 1, done.stderr  # the last change was refused: incomplete
    read, tests, staged, edited = _told(scripted)
    assert read["success"] is True
    for result, does in (
        (tests, "run_tests runs code"),
        (staged, "git_add changes git's state"),
        (edited, "edit_file changes files"),
    ):
        assert result["success"] is False and does in str(result["error"])
        assert 'approval mode "read-only"' in str(result["error"])
    assert (repo / "README.md").read_text() == "# Tiny project\n"
    assert git(repo, "diff", "--cached", "--name-only") == ""


def test_run_auto_edits_applies_changes_and_still_asks_for_the_rest(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("edit_file", path="README.md", search="Tiny", replace="Huge"),
        tool_call("git_commit", message="huge"),
        {"content": "Edited; the commit was refused."},
    ]
    head = git(repo, "rev-parse", "HEAD")
    done = toolgate_task(
        "run", "Do it.", repo, scripted, "--mode", "auto-edits", "--approve", "deny"
    )
    assert (repo / "README.md").read_text() == "# Huge project\n"  # nobody was asked
    assert "--approve deny" in str(last_tool_result(scripted.requests[-1])["error"])
    assert git(repo, "rev-parse", "HEAD") == head
    assert done.returncode == 1, done.stderr


def test_run_refuses_an_unknown_mode(repo: Path, scripted: ScriptedModel) -> None:
    done = toolgate_task("run", "Do it.", repo, scripted, "--mode", "yolo")
    assert done.returncode == 2
    assert "read-only" in done.stderr and scripted.requests == []


def test_chat_mode_lists_chooses_and_refuses(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [tool_call("run_tests"), {"content": "The tests were refused."}]
    with Terminal("chat", *on_scripted(repo, scripted), env={"NO_COLOR": "1"}) as term:
        term.expect(PROMPT)
        term.type("/mode\r")
        listed = term.expect(PROMPT)
        assert "* ask" in listed and "  read-only" in listed and "  auto-edits" in listed
        term.type("/mode yolo\r")
        term.expect("the approval mode is one of ask, auto-edits, read-only")
        term.expect(PROMPT)
        term.type("/mode read-only\r")
        chosen = term.expect(PROMPT)
        assert "* read-only" in chosen
        term.type("run the tests\r")
        term.expect("The tests were refused.")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
    refused = last_tool_result(scripted.requests[-1])
    assert refused["success"] is False
    assert 'approval mode "read-only"' in refused["error"] and "runs code" in refused["error"]
