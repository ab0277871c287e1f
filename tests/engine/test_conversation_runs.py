"""Runs that continue a conversation: what the next request holds, whatever the last one did."""

from __future__ import annotations

import json
from pathlib import Path

from tests.engine.helpers import ask_in_session
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.config import load_config
from toolgate.session import SessionService


async def test_a_native_turn_is_written_as_text_when_the_session_goes_on_in_text_mode(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("read_file", path="README.md"),
        {"content": "It is the Tiny project."},
        {"content": "Still tiny."},
    ]
    service = SessionService(repo, lambda: load_config(repo))
    native = {"tool_calling": {"mode": "native"}}
    session_id, first = await ask_in_session(service, scripted, repo, "What is it?", None, native)
    assert first.status == "completed"
    text = {"tool_calling": {"mode": "text"}}
    _, second = await ask_in_session(service, scripted, repo, "And now?", session_id, text)
    assert second.status == "completed", second.reason
    messages = scripted.requests[-1]["messages"]
    assert "tools" not in scripted.requests[-1]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert messages[2]["content"] == '<tool name="read_file" args>{"path": "README.md"}</tool>'
    assert messages[3]["content"].startswith('<tool_result name="read_file" success="true">')
    assert "Tiny project" in messages[3]["content"]
    assert messages[-1] == {"role": "user", "content": "And now?"}


async def test_a_final_answer_call_is_kept_as_plain_words(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("final_answer", answer="Done: nothing to change."),
        {"content": "ok"},
    ]
    service = SessionService(repo, lambda: load_config(repo))
    session_id, first = await ask_in_session(service, scripted, repo, "Check it.", None)
    assert first.answer == "Done: nothing to change."
    await ask_in_session(service, scripted, repo, "Thanks.", session_id)
    messages = scripted.requests[-1]["messages"]
    # a call with no result after it would be refused by the endpoint
    assert not any(m.get("tool_calls") for m in messages)
    assert {"role": "assistant", "content": "Done: nothing to change."} in messages
    transcript = service.load(session_id)["transcript"]
    assert [e["kind"] for e in transcript] == [
        "user",
        "assistant",
        "run",
        "user",
        "assistant",
        "run",
    ]


async def test_a_cancelled_or_failed_turn_leaves_a_history_the_endpoint_accepts(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("read_file", path="README.md"),
        {"status": 400, "error": "the server fell over"},
        {"content": "fine now"},
    ]
    service = SessionService(repo, lambda: load_config(repo))
    session_id, first = await ask_in_session(service, scripted, repo, "Read it.", None)
    assert first.status == "failed" and "HTTP 400" in (first.reason or "")
    _, second = await ask_in_session(service, scripted, repo, "Try again.", session_id)
    assert second.status == "completed"
    messages = scripted.requests[-1]["messages"]
    ids = {c["id"] for m in messages for c in m.get("tool_calls") or []}
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert ids == answered and ids  # every call has its result, and the read is kept
    notes = [e for e in service.load(session_id)["transcript"] if e["kind"] == "note"]
    assert notes and "run failed" in notes[0]["text"] and "HTTP 400" in notes[0]["text"]
    assert json.dumps(messages).count("Read it.") == 1
