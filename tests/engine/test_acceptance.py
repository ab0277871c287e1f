"""The original acceptance scenario, end to end over real HTTP, git and pytest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import git
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

from toolgate.agent.events import EventBus
from toolgate.config import load_config
from toolgate.review.reviewer import AutoReviewer
from toolgate.session import Endpoint, RunSetup, create_run
from toolgate.workspace import Workspace

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _expect_failure(body: dict[str, Any]) -> dict[str, Any]:
    result = last_tool_result(body)
    failures = result["data"]["failures"]
    assert result["data"]["summary"]["failed"] == 1, result
    assert failures[0]["file"] == "test_calc.py"
    assert failures[0]["line"] == 5
    return tool_call(
        "edit_file",
        path="calc.py",
        search="return a - b",
        replace="return a + b",
        _reasoningForCall="the test shows add subtracts",
    )


def _expect_pass(body: dict[str, Any]) -> dict[str, Any]:
    result = last_tool_result(body)
    assert result["data"]["summary"] == {**result["data"]["summary"], "passed": 1, "failed": 0}
    return tool_call("git_add", files=["calc.py", "test_calc.py"])


async def run_scenario(repo: Path, scripted: ScriptedModel, mode: str = "auto") -> Any:
    config = load_config(repo, overrides={"tool_calling": {"mode": mode}})
    bus = EventBus()
    events: list[Any] = []
    bus.subscribe(events.append)
    setup = RunSetup(root=repo, config=config, reviewer=AutoReviewer(Workspace(repo)), bus=bus)
    run = await create_run(
        setup,
        "Write add() in calc.py with a test, make it pass, commit.",
        Endpoint(scripted.base_url, scripted.model),
    )
    outcome = await run.run()
    await run.model.close()
    return outcome, events


async def test_write_test_fix_commit(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("write_file", path="calc.py", content=BUGGY),
        tool_call("write_file", path="test_calc.py", content=TESTS),
        tool_call("run_tests"),
        _expect_failure,
        tool_call("run_tests", command="python -m pytest -q"),
        _expect_pass,
        tool_call("git_commit", message="Add add() with a test"),
        {"content": "Done: add() works and is committed."},
    ]
    outcome, events = await run_scenario(repo, scripted)
    assert outcome.status == "completed", outcome
    assert outcome.answer == "Done: add() works and is committed."
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert git(repo, "log", "-1", "--format=%s").strip() == "Add add() with a test"
    assert git(repo, "status", "--porcelain").strip() == ""
    # every tool result reached the model with its call id
    tool_ids = [m["tool_call_id"] for m in scripted.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(tool_ids) == 7
    log = json.loads(Path(outcome.log_path).read_text())
    assert log["status"] == "completed" and log["tool_calling_mode"] == "native"
    calls = [c for step in log["steps"] for c in step["calls"]]
    assert [c["name"] for c in calls] == [
        "write_file",
        "write_file",
        "run_tests",
        "edit_file",
        "run_tests",
        "git_add",
        "git_commit",
    ]
    assert calls[3]["reasoning"] == "the test shows add subtracts"
    assert "_reasoningForCall" not in calls[3]["arguments"]
    assert [c["decision"] for c in calls] == [
        "approved",
        "approved",
        "auto",
        "approved",
        "auto",
        "approved",
        "approved",
    ]
    assert log["metrics"]["tool_call_parse_errors_total"] == 0
    executed = {
        (m["labels"]["tool"], m["labels"]["success"]): m["value"]
        for m in log["metrics"]["tool_calls_executed_total"]
    }
    assert executed[("run_tests", "true")] == 2
    types = [e.type for e in events]
    assert types[0] == "run_started" and types[-1] == "run_finished"
