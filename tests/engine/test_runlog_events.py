"""Events, metrics and the run log: their fields, how they are derived, what they keep out."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import answer, calls, drive, results_read
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.events import Event
from toolgate.agent.metrics import Metrics


def _bad_and_good_turns() -> list[Any]:
    return [
        calls(
            ("read_file", {"path": "README.md", "_reasoningForCall": "see the project"}),
            ("write_file", {"path": "n.txt", "content": "n\n"}),
            ("read_file", {"path": "missing.txt"}),
        ),
        {"tool_calls": [{"name": "read_file", "arguments": "{not json"}]},
        answer(),
    ]


async def test_event_fields(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = _bad_and_good_turns()
    driven = await drive(repo, scripted, task="look around")
    run_id = driven.outcome.run_id
    assert all(e.run_id == run_id for e in driven.events)
    proposed = driven.of_type("tool_call_proposed")
    assert [p["tool_name"] for p in proposed] == ["read_file", "write_file", "read_file"]
    assert proposed[0]["raw_args"] == {"path": "README.md"}
    assert proposed[0]["reasoning"] == "see the project"
    executed = driven.of_type("tool_call_executed")
    assert [(e["tool_name"], e["success"]) for e in executed] == [
        ("read_file", True),
        ("write_file", True),
        ("read_file", False),
    ]
    for event in executed:
        assert event["run_id"] == run_id
        assert isinstance(event["latency_ms"], (int, float)) and event["latency_ms"] >= 0
        assert event["output_truncated"] is False
        assert isinstance(event["output_size_bytes"], int)
    assert executed[0]["output_size_bytes"] == len(b"# Tiny project\n")
    (parse_error,) = driven.of_type("tool_call_parse_error")
    assert parse_error["run_id"] == run_id
    assert parse_error["raw_excerpt"] == "{not json"
    assert "not valid JSON" in parse_error["error"]
    (created,) = driven.of_type("proposal_created")
    assert created["path"] == "n.txt" and "+n" in created["diff"]
    (resolved,) = driven.of_type("proposal_resolved")
    assert resolved["proposal_id"] == created["proposal_id"] and resolved["status"] == "accepted"
    types = [e.type for e in driven.events]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert driven.events[0].fields["task"] == "look around"


async def test_counters_are_derived_from_events(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = _bad_and_good_turns()
    driven = await drive(repo, scripted)
    metrics = driven.log["metrics"]
    replayed = Metrics()
    for event in driven.events:
        replayed(event)
    assert replayed.snapshot() == metrics
    # and the same numbers come out of the events the run log kept
    from_log = Metrics()
    for doc in driven.log["events"]:
        fields = {k: v for k, v in doc.items() if k not in ("type", "run_id", "time")}
        from_log(Event(doc["type"], doc["run_id"], fields))
    assert from_log.snapshot() == metrics
    assert metrics["tool_calls_proposed_total"] == [
        {"labels": {"tool": "read_file"}, "value": 2},
        {"labels": {"tool": "write_file"}, "value": 1},
    ]
    assert {"labels": {"tool": "read_file", "success": "false"}, "value": 1} in metrics[
        "tool_calls_executed_total"
    ]
    assert metrics["tool_call_parse_errors_total"] == 1
    assert 'tool_calls_proposed_total{tool="read_file"} 2' in replayed.prometheus()


def _iso(value: str) -> datetime:
    return datetime.fromisoformat(value)


async def test_run_log_fields_and_valid_after_every_step(
    repo: Path, scripted: ScriptedModel
) -> None:
    seen: list[Any] = []

    def peek(reply: dict[str, Any]) -> Any:
        def entry(body: dict[str, Any]) -> dict[str, Any]:
            logs = list((repo / ".toolgate" / "runs").glob("*.json"))
            seen.append([json.loads(p.read_text()) for p in logs])  # raises if half-written
            return reply

        return entry

    scripted.script = [
        peek(tool_call("read_file", path="README.md")),
        peek(tool_call("write_file", path="a.txt", content="a\n")),
        peek(tool_call("git_status")),
        peek(answer("finished")),
    ]
    driven = await drive(repo, scripted, task="the task")
    assert [len(s) for s in seen] == [1, 1, 1, 1]
    assert [len(s[0]["steps"]) for s in seen] == [0, 1, 2, 3]
    assert all(s[0]["status"] == "running" and s[0]["finished_at"] is None for s in seen)
    assert seen[2][0]["steps"][1]["calls"][0]["name"] == "write_file"
    log = driven.log
    for key in ("run_id", "task", "model", "base_url", "tool_calling_mode", "status"):
        assert log[key], key
    assert (log["run_id"], log["task"]) == (driven.outcome.run_id, "the task")
    assert (log["model"], log["base_url"]) == ("scripted-model", scripted.base_url)
    assert log["tool_calling_mode"] == "native" and log["status"] == "completed"
    assert _iso(log["started_at"]) <= _iso(log["finished_at"])
    assert Path(driven.outcome.log_path) == repo / ".toolgate" / "runs" / f"{log['run_id']}.json"
    call = log["steps"][1]["calls"][0]
    assert {"id", "name", "arguments", "decision", "result"} <= set(call)
    assert call["arguments"] == {"path": "a.txt", "content": "a\n"}
    assert call["decision"] == "approved"
    assert call["result"]["success"] is True
    assert log["events"] and log["metrics"]["tool_calls_proposed_total"]
    # the run's records stay out of git
    assert (repo / ".toolgate" / ".gitignore").read_text().count("runs/") == 1


@pytest.mark.parametrize("store_raw", [False, True])
async def test_raw_output_is_kept_only_when_asked(
    repo: Path, scripted: ScriptedModel, store_raw: bool
) -> None:
    big = "".join(f"row {i:04d}\n" for i in range(1000))
    (repo / "big.txt").write_text(big)
    scripted.script = [tool_call("read_file", path="big.txt"), answer()]
    retention = {"store_raw_tool_output": store_raw, "max_output_bytes": 1000}
    driven = await drive(repo, scripted, overrides={"tool_calling": {"retention": retention}})
    (seen,) = results_read(scripted)
    assert seen["output_truncated"] is True
    assert seen["data"]["content"].endswith("row 0999\n")
    assert len(seen["data"]["content"]) < 1000
    logged = driven.calls()[0]["result"]["data"]["content"]
    if store_raw:
        assert logged == big
    else:
        assert logged == seen["data"]["content"]


KEY = "tg-live-key-98765ABCDEFxyz"


@pytest.mark.parametrize("source", ["env", "user-config"])
async def test_api_key_appears_nowhere(
    repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    if source == "env":
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
    else:
        import os

        config = Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text('[model]\napi_key_env = "MY_PROVIDER_KEY"\n')
        monkeypatch.setenv("MY_PROVIDER_KEY", KEY)
    (repo / "leak.txt").write_text(f"the key is {KEY}\n")
    scripted.script = [
        {
            "content": f"I found {KEY}.",
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "leak.txt"}},
                {"name": "write_file", "arguments": {"path": "copy.txt", "content": KEY}},
                {"name": "read_file", "arguments": {"path": f"{KEY}.txt"}},
                {"name": f"tool_{KEY}", "arguments": {}},
                {"name": "read_file", "arguments": '{"path": "' + KEY},
            ],
        },
        {"status": 401, "error": f"Incorrect API key provided: {KEY}"},
    ]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "failed"
    # the key really was in use, so the checks below could find it
    assert driven.run.model.settings.api_key == KEY
    assert KEY not in Path(driven.outcome.log_path).read_text()
    for event in driven.events:
        assert KEY not in json.dumps(event.to_dict(), default=str), event.type
    assert KEY not in (driven.outcome.reason or "")
    assert KEY not in (driven.outcome.answer or "")
