"""The gate and the policy through real runs: defaults, lists, approvals, limits, statuses."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import git
from tests.engine.helpers import (
    answer,
    build,
    calls,
    drive,
    fast_pytest,
    results_read,
    tool_names,
)
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.review.proposal import Proposal, Resolution
from toolgate.review.reviewer import DenyReviewer, DiskReviewer


async def test_defaults_with_approve_deny(
    repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_pytest(monkeypatch)
    (repo / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    scripted.script = [
        calls(
            ("read_file", {"path": "README.md"}),
            ("list_directory", {}),
            ("search_code", {"pattern": "Tiny"}),
            ("git_status", {}),
            ("run_tests", {}),
            ("write_file", {"path": "new.txt", "content": "x\n"}),
            ("edit_file", {"path": "README.md", "search": "Tiny", "replace": "Huge"}),
            ("git_add", {"files": ["test_ok.py"]}),
            ("git_commit", {"message": "sneaky"}),
        ),
        answer(),
    ]
    head = git(repo, "rev-parse", "HEAD")
    driven = await drive(repo, scripted, reviewer=DenyReviewer)
    decisions = [c["decision"] for c in driven.calls()]
    assert decisions == ["auto"] * 5 + ["rejected"] * 4
    results = results_read(scripted)
    assert [r["success"] for r in results] == [True] * 5 + [False] * 4
    assert results[4]["data"]["summary"]["passed"] == 1
    for result in results[5:]:
        assert "--approve deny" in result["error"], result
    assert not (repo / "new.txt").exists()
    assert (repo / "README.md").read_text() == "# Tiny project\n"
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "diff", "--cached", "--name-only") == ""
    assert driven.outcome.status == "incomplete"  # every change was refused


async def test_deny_list_is_a_result_the_model_reads(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [tool_call("read_file", path="README.md"), answer("I may not read files.")]
    driven = await drive(repo, scripted, overrides={"policy": {"deny_tools": ["read_file"]}})
    (result,) = results_read(scripted)
    assert result["success"] is False
    assert "read_file is denied by policy" in result["error"]
    assert result["suggestions"]
    assert [c["decision"] for c in driven.calls()] == ["denied"]
    assert driven.outcome.status == "completed"
    assert driven.outcome.answer == "I may not read files."


async def test_repeated_denials_end_blocked_by_policy(repo: Path, scripted: ScriptedModel) -> None:
    scripted.fallback = tool_call("git_status")
    driven = await drive(
        repo,
        scripted,
        overrides={"policy": {"deny_tools": ["git_status"]}, "limits": {"max_tool_retries": 1}},
    )
    assert driven.outcome.status == "blocked_by_policy", driven.outcome
    assert driven.log["status"] == "blocked_by_policy"
    assert len(scripted.requests) == 2


async def test_allow_list_narrows_the_tools_offered(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        calls(("read_file", {"path": "README.md"}), ("write_file", {"path": "a", "content": ""})),
        answer(),
    ]
    await drive(repo, scripted, overrides={"policy": {"allow_tools": ["read_file"]}})
    assert tool_names(scripted.requests[0]) == ["read_file", "final_answer"]
    read, write = results_read(scripted)
    assert read["success"] is True
    assert write["success"] is False and "unknown tool 'write_file'" in write["error"]
    assert not (repo / "a").exists()


async def test_per_tool_approvals(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        calls(
            ("write_file", {"path": "auto.txt", "content": "landed\n"}),
            ("read_file", {"path": "README.md"}),
            ("git_status", {}),
        ),
        answer(),
    ]
    approvals = {"write_file": "auto", "read_file": "ask", "git_status": "deny"}
    driven = await drive(
        repo, scripted, reviewer=DenyReviewer, overrides={"policy": {"approvals": approvals}}
    )
    assert [c["decision"] for c in driven.calls()] == ["auto", "rejected", "denied"]
    wrote, read, status = results_read(scripted)
    assert wrote["success"] is True
    assert (repo / "auto.txt").read_text() == "landed\n"
    assert read["success"] is False and "--approve deny" in read["error"]
    assert status["success"] is False and "denied by policy" in status["error"]


async def test_calls_of_one_turn_run_in_order(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        calls(
            ("write_file", {"path": "n.txt", "content": "1\n"}),
            ("read_file", {"path": "n.txt"}),
            ("edit_file", {"path": "n.txt", "search": "1", "replace": "2"}),
            ("read_file", {"path": "n.txt"}),
            ("write_file", {"path": "n.txt", "content": "3\n"}),
            ("read_file", {"path": "n.txt"}),
        ),
        answer(),
    ]
    driven = await drive(repo, scripted)
    results = results_read(scripted)
    assert [r["data"]["content"] for r in results[1::2]] == ["1\n", "2\n", "3\n"]
    assert [r["tool_call_id"] for r in results] == [
        f"call_{i}_{n}"
        for i, n in enumerate(
            ["write_file", "read_file", "edit_file", "read_file", "write_file", "read_file"]
        )
    ]
    executed = [e["call_id"] for e in driven.of_type("tool_call_executed")]
    assert executed == [r["tool_call_id"] for r in results]


@pytest.mark.parametrize(
    ("limits", "fallback", "status", "reason"),
    [
        ({"max_steps": 2}, tool_call("read_file", path="README.md"), "limit_reached", "max_steps"),
        (
            {"max_llm_calls": 3},
            tool_call("read_file", path="README.md"),
            "limit_reached",
            "max_llm_calls",
        ),
        (
            {"max_tool_retries": 2},
            tool_call("read_file", path="missing.txt"),
            "failed",
            "max_tool_retries",
        ),
        ({}, answer("All done."), "completed", None),
        ({}, tool_call("final_answer", answer="Via the tool."), "completed", None),
    ],
    ids=["max_steps", "max_llm_calls", "max_tool_retries", "answer", "final_answer_tool"],
)
async def test_run_statuses(
    repo: Path,
    scripted: ScriptedModel,
    limits: dict[str, Any],
    fallback: dict[str, Any],
    status: str,
    reason: str | None,
) -> None:
    scripted.fallback = fallback
    driven = await drive(repo, scripted, overrides={"limits": limits} if limits else None)
    assert driven.outcome.status == status, driven.outcome
    assert driven.log["status"] == status
    if reason:
        assert reason in (driven.outcome.reason or "")
        assert driven.log["reason"] == driven.outcome.reason
    else:
        assert driven.outcome.answer in ("All done.", "Via the tool.")
    if "max_steps" in limits:
        assert len(driven.log["steps"]) == limits["max_steps"]
    if "max_llm_calls" in limits:
        assert len(scripted.requests) == limits["max_llm_calls"]
    if "max_tool_retries" in limits:
        assert len(scripted.requests) == limits["max_tool_retries"] + 1


async def test_max_run_seconds(repo: Path, scripted: ScriptedModel) -> None:
    scripted.delay = 1.5
    scripted.fallback = answer("too late")
    started = time.monotonic()
    driven = await drive(repo, scripted, overrides={"limits": {"max_run_seconds": 0.3}})
    assert driven.outcome.status == "limit_reached", driven.outcome
    assert "longer than" in (driven.outcome.reason or "")
    assert time.monotonic() - started < 1.4


class _CancellingReviewer(DiskReviewer):
    """A person who presses cancel while a proposal is on screen."""

    run: Any = None

    async def review_change(self, proposal: Proposal) -> Resolution:
        self.run.cancel("the person pressed cancel")
        await asyncio.sleep(30)
        raise AssertionError("not cancelled")


async def test_cancel_while_a_proposal_waits(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [tool_call("write_file", path="x.txt", content="x\n"), answer()]
    run, events = await build(repo, scripted, reviewer=_CancellingReviewer)
    run.reviewer.run = run
    started = time.monotonic()
    try:
        outcome = await run.run()
    finally:
        await run.model.close()
    assert time.monotonic() - started < 10
    assert outcome.status == "cancelled"
    assert outcome.reason == "the person pressed cancel"
    log = json.loads(Path(outcome.log_path or "").read_text())
    assert log["status"] == "cancelled" and log["finished_at"]
    assert not (repo / "x.txt").exists()
    assert events[-1].type == "run_finished" and events[-1].fields["status"] == "cancelled"
