"""A session's requests keep a stable prefix: what a server kept of the last one stays good.

The system prompt and the tools never change within a session (a summary of earlier turns
included), and eliding an old output replaces it where it was: every request begins with
the messages of the one before, in the same order, each the same or its stub.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import ask_in_session
from tests.support.scripted_model import ScriptedModel

from toolgate.config import load_config
from toolgate.conversation.budget import SUMMARY_INSTRUCTION
from toolgate.session import SessionService


def _reply(mode: str) -> Any:
    """Read the turn's file, then answer; summarise when asked."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]
        if SUMMARY_INSTRUCTION in str(last.get("content")):
            return {"content": "Notes: each turn read one part."}
        if last["role"] == "tool" or "<tool_result" in str(last.get("content")):
            return {"content": "Read it."}
        number = str(last.get("content")).rsplit("turn ", 1)[-1].split(":")[0]
        arguments = {"path": f"part{number}.txt"}
        if mode == "text":
            return {"content": f'<tool name="read_file" args>{json.dumps(arguments)}</tool>'}
        return {"tool_calls": [{"name": "read_file", "arguments": arguments}]}

    return reply


def _skeleton(message: dict[str, Any]) -> tuple[Any, ...]:
    """What elision may not change: the role, and which call a message makes or answers."""
    calls = tuple(c["id"] for c in message.get("tool_calls") or [])
    return (message["role"], message.get("tool_call_id"), calls)


@pytest.mark.parametrize("mode", ["native", "text"])
async def test_the_system_prompt_and_tools_stay_and_elision_keeps_the_order(
    repo: Path, scripted: ScriptedModel, mode: str
) -> None:
    turns = 12
    for number in range(1, turns + 1):
        (repo / f"part{number}.txt").write_text(f"part {number}\n" + "some words here\n" * 90)
    scripted.fallback = _reply(mode)
    service = SessionService(repo, lambda: load_config(repo))
    overrides = {"model": {"context_tokens": 4000}, "tool_calling": {"mode": mode}}
    session_id = None
    for number in range(1, turns + 1):
        # the person's words are never elided: only a summary makes room for them
        task = f"turn {number}: read the part" + ", and keep the old names" * 20
        session_id, outcome = await ask_in_session(
            service, scripted, repo, task, session_id, overrides
        )
        assert outcome.status == "completed", outcome.reason
    work = [b for b in scripted.requests if SUMMARY_INSTRUCTION not in json.dumps(b)]
    assert len(work) == 2 * turns
    assert len(scripted.requests) > len(work), "the window must fill up to a summary"
    for body in work[1:]:
        # nothing that changes (a time, a count, the summary) may be in either
        assert body["messages"][0] == work[0]["messages"][0]
        assert body.get("tools") == work[0].get("tools")
    elided = 0
    for before, after in zip(scripted.requests, scripted.requests[1:], strict=False):
        if SUMMARY_INSTRUCTION in json.dumps([before, after]):
            continue  # a summary replaces the earlier turns: the prefix starts again
        old, new = before["messages"], after["messages"]
        assert [_skeleton(m) for m in new[: len(old)]] == [_skeleton(m) for m in old]
        for was, now in zip(old, new, strict=False):
            if was != now:
                assert "elided" in str(now["content"]) and "elided" not in str(was["content"])
                elided += 1
    assert elided, "the window must fill up to elide outputs"
