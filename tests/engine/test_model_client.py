"""The model client against the scripted server: server quirks, bad calls, bad endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.engine.helpers import answer, calls, drive, results_read
from tests.support.net import closed_port
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.events import ASSISTANT_TEXT, EventBus
from toolgate.config import load_config
from toolgate.review.reviewer import AutoReviewer
from toolgate.session import Endpoint, RunSetup, create_run
from toolgate.workspace import Workspace

KEY = "sk-test-0123456789abcdefSECRET"
LONG = "line of text that is long enough to be streamed in many pieces\n" * 8


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
@pytest.mark.parametrize("quirks", ["plain", "repeat_name", "omit_done", "both"])
async def test_several_calls_per_turn_survive_server_quirks(
    repo: Path, scripted: ScriptedModel, quirks: str, stream: bool
) -> None:
    scripted.repeat_name = quirks in ("repeat_name", "both")
    scripted.omit_done = quirks in ("omit_done", "both")
    scripted.script = [
        {
            "content": "Let me write both files.",
            "tool_calls": [
                {"id": "w1", "name": "write_file", "arguments": {"path": "a.txt", "content": LONG}},
                {"id": "w2", "name": "write_file", "arguments": {"path": "b.txt", "content": "b"}},
                {"id": "r3", "name": "read_file", "arguments": {"path": "a.txt"}},
            ],
        },
        answer("Both written."),
    ]
    driven = await drive(repo, scripted, overrides={"model": {"stream": stream}})
    assert driven.outcome.status == "completed", driven.outcome
    assert driven.outcome.answer == "Both written."
    assert (repo / "a.txt").read_text() == LONG
    assert (repo / "b.txt").read_text() == "b"
    results = results_read(scripted)
    assert [r["tool_call_id"] for r in results] == ["w1", "w2", "r3"]
    assert results[2]["data"]["content"] == LONG
    assistant = next(m for m in scripted.requests[-1]["messages"] if m["role"] == "assistant")
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == [
        "write_file",
        "write_file",
        "read_file",
    ]
    assert assistant["content"] == "Let me write both files."
    assert bool(scripted.requests[0].get("stream")) is stream


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
async def test_assistant_content_null_is_never_sent(
    repo: Path, scripted: ScriptedModel, stream: bool
) -> None:
    scripted.null_content_500 = True
    scripted.script = [
        tool_call("read_file", path="README.md"),  # no text: the server says content null
        tool_call("list_directory"),
        answer(),
    ]
    driven = await drive(repo, scripted, overrides={"model": {"stream": stream}})
    assert driven.outcome.status == "completed", driven.outcome
    for body in scripted.requests:
        for message in body["messages"]:
            assert message.get("content") is not None, message


REFUSAL = "I can't help with that request.\nIt asks for something I will not do."


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
async def test_a_refusal_is_the_answer_and_ends_the_run_refused(
    repo: Path, scripted: ScriptedModel, stream: bool
) -> None:
    # OpenAI sends a refusal in its own field, with finish reason "stop".
    scripted.script = [{"refusal": REFUSAL}, answer("never asked")]
    driven = await drive(repo, scripted, overrides={"model": {"stream": stream}})
    outcome = driven.outcome
    assert (outcome.status, outcome.reason) == (
        "incomplete",
        "the model refused: I can't help with that request.",
    )
    assert outcome.answer == REFUSAL and outcome.refusal == REFUSAL
    assert outcome.finish_reason == "stop"
    shown = "".join(e["text"] for e in driven.of_type(ASSISTANT_TEXT))
    assert shown == REFUSAL  # what the person reads, as the answer
    # one request: a refusal is not mistaken for the empty stream some servers send
    assert len(scripted.requests) == 1 and bool(scripted.requests[0].get("stream")) is stream
    step = driven.log["steps"][0]
    assert step["refusal"] == REFUSAL and step["assistant_text"] == REFUSAL
    assert (driven.log["status"], driven.log["answer"]) == ("incomplete", REFUSAL)
    assert driven.log["reason"] == outcome.reason


async def test_a_content_filter_stop_ends_the_run_refused_too(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": "I cannot", "finish_reason": "content_filter"}]
    driven = await drive(repo, scripted)
    outcome = driven.outcome
    assert (outcome.status, outcome.answer, outcome.refusal) == ("incomplete", "I cannot", None)
    assert outcome.reason == "the endpoint's content filter stopped the answer"
    assert "refusal" not in driven.log["steps"][0]


async def test_malformed_and_invalid_arguments_are_results(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        {
            "tool_calls": [
                {"name": "read_file", "arguments": '{"path": "README.md"'},
                {"name": "read_file", "arguments": {"path": 5}},
                {"name": "read_file", "arguments": {"file": "README.md"}},
                {"name": "write_file", "arguments": {"path": "x.txt"}},
                {"name": "rm_rf", "arguments": {"path": "/"}},
                {"name": "read_file", "arguments": "[1, 2]"},
                {"name": "read_file", "arguments": {"path": "README.md"}},
            ]
        },
        answer(),
    ]
    driven = await drive(repo, scripted)
    # The write never landed: the answer after it is not taken at its word.
    assert driven.outcome.status == "incomplete"
    assert "did not land (write_file:" in (driven.outcome.reason or "")
    results = results_read(scripted)
    assert len(results) == 7
    assert "not valid JSON" in results[0]["error"]
    assert "path" in results[1]["error"] and "invalid arguments" in results[1]["error"]
    assert "invalid arguments" in results[2]["error"]
    assert "content" in results[3]["error"]
    assert "unknown tool 'rm_rf'" in results[4]["error"]
    assert any("read_file" in s for s in results[4]["suggestions"])
    assert "JSON object" in results[5]["error"] or "invalid" in results[5]["error"]
    assert [r["success"] for r in results] == [False] * 6 + [True]
    errors = driven.of_type("tool_call_parse_error")
    assert len(errors) == 6
    assert errors[0]["raw_excerpt"] == '{"path": "README.md"'
    assert all(e["run_id"] == driven.outcome.run_id and e["error"] for e in errors)
    assert driven.log["metrics"]["tool_call_parse_errors_total"] == 6
    assert not (repo / "x.txt").exists()
    # nothing from a bad call reached an activity
    assert [e["tool_name"] for e in driven.of_type("tool_call_executed")] == ["read_file"]


async def _run_against(repo: Path, base_url: str, model: str | None = "m"):  # type: ignore[no-untyped-def]
    config = load_config(repo)
    bus = EventBus()
    setup = RunSetup(root=repo, config=config, reviewer=AutoReviewer(Workspace(repo)), bus=bus)
    run = await create_run(setup, "task", Endpoint(base_url, model))
    try:
        return await run.run()
    finally:
        await run.model.close()


async def test_endpoint_down_fails_with_one_line(repo: Path) -> None:
    outcome = await _run_against(repo, f"http://127.0.0.1:{closed_port()}/v1")
    assert outcome.status == "failed"
    assert "cannot reach the model" in outcome.reason
    assert "\n" not in outcome.reason and "Traceback" not in outcome.reason
    log = json.loads(Path(outcome.log_path).read_text())
    assert log["status"] == "failed" and log["reason"] == outcome.reason


async def test_auth_failure_names_no_key(
    repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    scripted.fallback = {"status": 401, "error": f"Incorrect API key provided: {KEY}."}
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "failed"
    assert "refused the API key" in driven.outcome.reason
    assert "HTTP 401" in driven.outcome.reason
    assert KEY not in driven.outcome.reason and KEY[:12] not in driven.outcome.reason
    assert KEY not in Path(driven.outcome.log_path).read_text()
    assert all(KEY not in json.dumps(e.to_dict()) for e in driven.events)


async def test_rate_limit_says_so(repo: Path, scripted: ScriptedModel) -> None:
    scripted.fallback = {"status": 429, "error": "Rate limit reached for requests"}
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "failed"
    assert "rate-limited" in driven.outcome.reason and "429" in driven.outcome.reason
    assert "\n" not in driven.outcome.reason


async def test_model_name_is_taken_from_the_server_when_not_given(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [calls(("git_status", {})), answer()]
    driven = await drive(repo, scripted, model=None)
    assert driven.outcome.status == "completed"
    assert {body["model"] for body in scripted.requests} == {"scripted-model"}
    assert driven.log["model"] == "scripted-model"
