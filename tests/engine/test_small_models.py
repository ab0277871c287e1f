"""Guards that keep small models' runs short and on track."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import answer, calls, drive, results_read, system_text
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.loop import FENCED_HINT
from toolgate.agent.repeats import REPEATED


async def test_a_repeated_call_is_refused_until_the_workspace_changes(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("read_file", path="README.md"),
        tool_call("read_file", path="README.md"),
        tool_call("write_file", path="README.md", content="# Changed\n"),
        tool_call("read_file", path="README.md"),
        answer(),
    ]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed"
    first, repeated, _write, after_change = results_read(scripted)
    assert first["success"] is True
    assert repeated["success"] is False and repeated["error"] == REPEATED
    assert after_change["success"] is True and after_change["data"]["content"] == "# Changed\n"


@pytest.mark.parametrize(
    ("look", "change", "seen"),
    [
        (tool_call("read_file", path="README.md"), "README.md", "a needle"),
        (tool_call("list_directory"), "notes.txt", "notes.txt"),
        (tool_call("search_code", pattern="needle"), "notes.txt", "a needle"),
        (tool_call("git_status"), "notes.txt", "notes.txt"),
    ],
    ids=["read_file", "list_directory", "search_code", "git_status"],
)
async def test_a_look_repeated_after_the_person_changed_the_workspace_runs_again(
    repo: Path, scripted: ScriptedModel, look: dict[str, Any], change: str, seen: str
) -> None:
    # The person edits the project while the model works: the same look sees something new,
    # so it is answered, and only a look that would see the same is refused.
    def person_edits(_body: dict[str, Any]) -> dict[str, Any]:
        (repo / change).write_text("a needle, put there by the person\n")
        return look

    scripted.script = [look, person_edits, look, answer()]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed"
    first, again, repeated = results_read(scripted)
    assert first["success"] is True and again["success"] is True, again
    assert seen not in json.dumps(first["data"])
    assert seen in json.dumps(again["data"])
    assert repeated["success"] is False and repeated["error"] == REPEATED
    executed = [e for e in driven.events if e.type == "tool_call_executed"]
    assert len(executed) == 2  # the refused repeat's look ran out of sight


async def test_repeating_forever_ends_the_run(repo: Path, scripted: ScriptedModel) -> None:
    scripted.fallback = tool_call("git_status")
    driven = await drive(repo, scripted, overrides={"limits": {"max_tool_retries": 2}})
    assert driven.outcome.status == "limit_reached"
    assert "repeating" in (driven.outcome.reason or "")
    assert len(scripted.requests) == 4  # the call, then three repeats


async def test_a_round_of_calls_that_changes_nothing_is_a_repeat(
    repo: Path, scripted: ScriptedModel
) -> None:
    # A small model's loop, seen with the embedded model: look, stage the file it never
    # changed, run the tests, and again. Staging and test runs succeed, but git sees the
    # workspace as it was, so the round is a repeat and does not run to the step limit.
    scripted.fallback = calls(
        ("git_status", {}), ("git_add", {"files": ["README.md"]}), ("run_tests", {})
    )
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "limit_reached"
    assert "repeating" in (driven.outcome.reason or "")
    assert len(scripted.requests) == 3  # the round, a round of three repeats, then one too many


async def test_staging_a_change_lets_the_same_look_run_again(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "README.md").write_text("# Tiny project, changed by the person\n")
    scripted.script = [
        tool_call("git_status"),
        tool_call("git_add", files=["README.md"]),
        tool_call("git_status"),
        answer(),
    ]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed"
    before, _add, after = results_read(scripted)
    assert before["data"]["unstaged"] == [{"path": "README.md", "status": "M"}]
    assert after["success"] is True, after
    assert after["data"]["staged"] == [{"path": "README.md", "status": "M"}]


async def test_a_commit_with_nothing_changed_says_so_and_one_with_nothing_staged_says_stage(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [tool_call("git_commit", message="Fix it"), answer()]
    await drive(repo, scripted)
    (clean,) = results_read(scripted)
    (repo / "README.md").write_text("# Tiny project, changed\n")
    (repo / "notes.txt").write_text("new\n")
    scripted.requests.clear()
    scripted.script = [tool_call("git_commit", message="Fix it"), answer()]
    await drive(repo, scripted)
    (unstaged,) = results_read(scripted)
    assert clean["success"] is False and unstaged["success"] is False
    assert clean["suggestions"] == [
        "Nothing changed since the last commit, so there is nothing to commit: "
        "change the files first, or, if the work is done, say so."
    ]
    assert unstaged["suggestions"] == ["Stage files with git_add first."]


async def test_a_fenced_call_gets_one_hint_and_then_runs(
    repo: Path, scripted: ScriptedModel
) -> None:
    fenced = '```python\n<tool name="read_file" args>{"path": "README.md"}</tool>\n```'
    scripted.script = [
        {"content": fenced},
        {"content": '<tool name="read_file" args>{"path": "README.md"}</tool>'},
        answer(),
    ]
    driven = await drive(repo, scripted, overrides={"tool_calling": {"mode": "text"}})
    assert driven.outcome.status == "completed"
    assert scripted.requests[1]["messages"][-1] == {"role": "user", "content": FENCED_HINT}
    assert "# Tiny project" in scripted.requests[2]["messages"][-1]["content"]


async def test_an_example_in_a_fence_beside_prose_still_ends_the_run_after_hints(
    repo: Path, scripted: ScriptedModel
) -> None:
    fenced = 'For example:\n```\n<tool name="read_file" args>{"path": "README.md"}</tool>\n```'
    scripted.fallback = {"content": fenced}
    driven = await drive(
        repo,
        scripted,
        overrides={"tool_calling": {"mode": "text"}, "limits": {"max_tool_retries": 2}},
    )
    assert driven.outcome.status == "completed"
    assert len(scripted.requests) == 3  # two hints, then the answer stands
    assert not (repo / ".toolgate" / "nothing").exists()


async def test_compact_prompt_lists_signatures_and_examples(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [answer()]
    await drive(
        repo, scripted, overrides={"tool_calling": {"mode": "text", "compact_prompt": True}}
    )
    system = system_text(scripted.requests[0])
    assert "- edit_file(path, search, replace):" in system
    assert '<tool name="git_add" args>{"files":["app.py"]}</tool>' in system
    assert "TOOLS:" not in system  # no JSON schemas for a small model
    assert "tools" not in scripted.requests[0]  # text mode sends no native tools


async def test_with_the_compact_prompt_a_fenced_call_runs(
    repo: Path, scripted: ScriptedModel
) -> None:
    fenced = '```json\n<tool name="read_file" args>{"path": "README.md"}</tool>\n```'
    scripted.script = [{"content": fenced}, answer()]
    driven = await drive(
        repo, scripted, overrides={"tool_calling": {"mode": "text", "compact_prompt": True}}
    )
    assert driven.outcome.status == "completed"
    assert "# Tiny project" in scripted.requests[1]["messages"][-1]["content"]
    assert [c["syntax"] for c in driven.calls()] == ["fenced_tag"]


async def test_an_invented_result_gets_a_hint(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        {"content": '<tool_result name="run_tests" success="true">Passed</tool_result>'},
        {"content": '<tool name="read_file" args>{"path": "README.md"}</tool>'},
        answer(),
    ]
    driven = await drive(repo, scripted, overrides={"tool_calling": {"mode": "text"}})
    assert driven.outcome.status == "completed"
    hint = scripted.requests[1]["messages"][-1]["content"]
    assert hint.startswith("You wrote a <tool_result> block yourself")
    assert [c["name"] for c in driven.calls()] == ["read_file"]


async def test_a_run_that_ends_on_invented_results_is_failed_not_completed(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.fallback = {
        "content": '<tool_result name="run_tests" success="true">Passed</tool_result>'
    }
    driven = await drive(
        repo,
        scripted,
        overrides={"tool_calling": {"mode": "text"}, "limits": {"max_tool_retries": 2}},
    )
    assert driven.outcome.status == "failed"
    assert "tool results itself" in (driven.outcome.reason or "")
    assert len(scripted.requests) == 3  # the answer, then one request after each of two hints
    assert driven.calls() == []
