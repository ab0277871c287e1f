"""The context budget: what gives way first, the summary call, and what is never cut."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import ask_in_session
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.events import EventBus
from toolgate.config import load_config
from toolgate.conversation.budget import (
    SUMMARY_INSTRUCTION,
    Budget,
    Entry,
    fit,
    message_bytes,
    stretch_bytes,
)
from toolgate.conversation.store import SessionStore
from toolgate.review.reviewer import AutoReviewer
from toolgate.session import Endpoint, SessionService
from toolgate.workspace import Workspace


def _tool(turn: int, call_id: str, name: str, data: dict[str, Any]) -> Entry:
    content = json.dumps({"success": True, "data": data})
    return Entry.of(turn, {"role": "tool", "tool_call_id": call_id, "content": content}, (name,))


def _call(turn: int, call_id: str, name: str) -> Entry:
    return Entry.of(
        turn,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
            ],
        },
    )


def _user(turn: int, text: str) -> Entry:
    return Entry.of(turn, {"role": "user", "content": text})


def _big(lines: int) -> str:
    return "\n".join(f"line {n} of a long output, padded to weigh something" for n in range(lines))


def _conversation() -> tuple[list[Entry], list[Entry]]:
    earlier = [
        _user(1, "read the log"),
        _call(1, "a", "read_file"),
        _tool(1, "a", "read_file", {"path": "log.txt", "content": _big(200)}),
        Entry.of(1, {"role": "assistant", "content": "read it"}),
        _user(2, "run the tests"),
        _call(2, "b", "run_tests"),
        _tool(2, "b", "run_tests", {"summary": {"passed": 3, "failed": 1}, "output": _big(212)}),
        Entry.of(2, {"role": "assistant", "content": "one fails"}),
    ]
    current = [
        _user(3, "fix it"),
        _call(3, "c", "read_file"),
        _tool(3, "c", "read_file", {"path": "a.py", "content": _big(150)}),
    ]
    return earlier, current


def _tokens(budget: Budget, messages: list[dict[str, Any]]) -> int:
    return sum(budget.message_tokens(message_bytes(m)) for m in messages)


def test_older_tool_outputs_are_elided_oldest_first() -> None:
    earlier, current = _conversation()
    everything = Budget(window=100_000, reserve=0)
    whole = _tokens(everything, [e.message for e in [*earlier, *current]])
    first_output = everything.message_tokens(earlier[2].size)
    # room for everything but a little less than the first output
    budget = Budget(window=whole - first_output // 2, reserve=0)
    fitted = fit(budget, 0, earlier, current)
    assert fitted.fits and fitted.elided[0] == "[output of read_file from turn 1 elided: 200 lines]"
    assert fitted.messages[2]["content"] == fitted.elided[0]
    assert fitted.messages[2]["tool_call_id"] == "a"  # still the answer to its call
    assert fitted.messages[-1] == current[-1].message  # the current step's output is kept
    assert fitted.tokens <= budget.limit


def test_outputs_go_a_stretch_at_a_time_and_stay_gone_as_the_conversation_grows() -> None:
    outputs = [_tool(1, f"c{n}", "read_file", {"content": _big(10)}) for n in range(12)]
    earlier = [_user(1, "read them"), *outputs, Entry.of(1, {"role": "assistant", "content": "ok"})]
    current = [_user(2, "and this"), _call(2, "d", "read_file")]
    output = Budget(window=100_000).message_tokens(outputs[0].size)
    whole = _tokens(Budget(window=100_000), [e.message for e in [*earlier, *current]])
    budget = Budget(window=whole - output // 2, reserve=0)  # one stub would be enough
    stretch = stretch_bytes(budget, 0)
    in_first = sum(1 for n in range(12) if 14 + n * outputs[0].size < stretch)
    fitted = fit(budget, 0, earlier, current)
    assert fitted.fits and 1 < in_first == len(fitted.elided)
    grown = fit(budget, 0, earlier, [*current, _tool(2, "d", "read_file", {"content": "x"})])
    assert grown.messages[: len(fitted.messages)] == fitted.messages


def test_the_stub_says_what_was_there() -> None:
    earlier, current = _conversation()
    fitted = fit(Budget(window=2_000, reserve=0), 0, earlier, current)
    assert fitted.elided == [
        "[output of read_file from turn 1 elided: 200 lines]",
        "[output of run_tests from turn 2 elided: 212 lines, 1 failed]",
    ]


def test_the_current_steps_outputs_and_every_users_words_are_never_cut() -> None:
    earlier, current = _conversation()
    fitted = fit(Budget(window=300, reserve=0), 0, earlier, current)
    assert not fitted.fits  # what is left is more than the window: the caller summarises
    assert fitted.messages[-1] == current[-1].message  # the last step's output whole
    users = [m for m in fitted.messages if m["role"] == "user"]
    assert [m["content"] for m in users] == ["read the log", "run the tests", "fix it"]


def test_nothing_is_elided_when_it_fits() -> None:
    earlier, current = _conversation()
    fitted = fit(Budget(window=100_000), 100, earlier, current)
    assert fitted.fits and fitted.elided == []
    assert fitted.messages == [e.message for e in [*earlier, *current]]


def test_usage_from_the_endpoint_corrects_the_ratio_but_never_towards_bigger_requests() -> None:
    budget = Budget()
    budget.learn(sent_bytes=20_000, prompt_tokens=10_000)  # 2 bytes a token: denser text
    assert budget.bytes_per_token < 2.0
    budget.learn(sent_bytes=50_000, prompt_tokens=10_000)  # 5 bytes a token: not trusted
    assert budget.bytes_per_token == 3.0


# -- through real runs against the scripted server --------------------------------------


def _answer(summary: dict[str, Any] | None = None) -> Any:
    """Answer like a model: call read_file once per turn, then reply; summarise when asked."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]
        if SUMMARY_INSTRUCTION in str(last.get("content")):
            if summary is not None:
                return summary
            return {"content": "Notes: the person asked to read big.txt each turn; done so."}
        if last["role"] == "tool":
            return {"content": f"read it ({len(body['messages'])} messages)"}
        return {"tool_calls": [{"name": "read_file", "arguments": {"path": "big.txt"}}]}

    return reply


async def _ask(
    service: SessionService,
    scripted: ScriptedModel,
    repo: Path,
    task: str,
    session_id: str | None,
    window: int,
) -> tuple[str, Any]:
    overrides = {"model": {"context_tokens": window}}
    return await ask_in_session(service, scripted, repo, task, session_id, overrides)


def _estimate(budget: Budget, body: dict[str, Any]) -> int:
    # the documented estimate: bytes / 3 per message plus its overhead, and the tools' schemas
    tools = budget.tokens(len(json.dumps(body["tools"]))) if body.get("tools") else 0
    return tools + _tokens(budget, body["messages"])


async def test_a_long_session_keeps_every_request_inside_an_8k_window(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "big.txt").write_text(_big(400)[:20_000])  # a 20 KB tool output every turn
    scripted.fallback = _answer()
    service = SessionService(repo, lambda: load_config(repo))
    session_id = None
    # the whole prompt (2,400 tokens of it fixed): the compact one leaves room for 40 turns
    overrides = {"model": {"context_tokens": 8192}, "tool_calling": {"compact_prompt": False}}
    for number in range(1, 41):
        task = f"turn {number}: read big.txt"
        session_id, outcome = await ask_in_session(
            service, scripted, repo, task, session_id, overrides
        )
        assert outcome.status == "completed", outcome.reason
    budget = Budget(window=8192)
    work = [b for b in scripted.requests if b.get("tools")]
    assert len(work) == 80
    assert max(_estimate(budget, body) for body in work) <= budget.limit
    for number, body in enumerate(work, 1):
        # the latest user turn is always there, whole (after the summary, when it is first)
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert users[-1].endswith(f"\n\nturn {(number + 1) // 2}: read big.txt") or (
            users[-1] == f"turn {(number + 1) // 2}: read big.txt"
        )
    summaries = [b for b in scripted.requests if not b.get("tools")]
    assert summaries, "40 turns of 20 KB outputs in 8k tokens need a summary"
    # the summary opens the first message; the system prompt stays as it was
    assert "Notes: the person asked" in work[-1]["messages"][1]["content"]
    assert work[-1]["messages"][0] == work[0]["messages"][0]
    runs = sorted((repo / ".toolgate" / "runs").glob("*.json"))
    logged = [json.loads(p.read_text()) for p in runs]
    assert all(log["session_id"] == session_id for log in logged)
    fitted = [s["context"] for log in logged for s in log["steps"] if "context" in s]
    assert any(c["elided"] for c in fitted)
    assert any("summarised_through_turn" in c for c in fitted)


async def _two_long_turns(
    repo: Path, scripted: ScriptedModel, answer: Any
) -> tuple[SessionService, str]:
    """A session of two turns that a 6,000-token window can only hold as a summary."""
    (repo / "big.txt").write_text(_big(400)[:20_000])
    scripted.fallback = answer
    service = SessionService(repo, lambda: load_config(repo))
    # long words of the person's, which no stub can stand in for: only a summary makes room
    words = " and keep the old names" * 300
    session_id, _ = await _ask(
        service, scripted, repo, "first: read big.txt" + words, None, 100_000
    )
    await _ask(service, scripted, repo, "second: read big.txt" + words, session_id, 100_000)
    return service, session_id


async def test_the_summary_replaces_older_turns_in_the_file_and_the_next_request(
    repo: Path, scripted: ScriptedModel
) -> None:
    service, session_id = await _two_long_turns(repo, scripted, _answer())
    scripted.requests.clear()
    _, outcome = await _ask(service, scripted, repo, "third: read big.txt", session_id, 6000)
    assert outcome.status == "completed", outcome.reason
    summary_body, first, second = scripted.requests
    assert summary_body.get("tools") is None
    assert "first: read big.txt" in summary_body["messages"][-1]["content"]
    for body in (first, second):
        text = json.dumps(body["messages"])
        assert "first: read big.txt" not in text and "second: read big.txt" not in text
        assert "Notes: the person asked" not in body["messages"][0]["content"]
        opening = body["messages"][1]
        assert opening["role"] == "user" and opening["content"].startswith(
            "Earlier in this conversation (turns 1–2, summarised):\nNotes: the person asked"
        )
        assert opening["content"].endswith("\n\nthird: read big.txt")
    records = [
        json.loads(line)
        for line in SessionStore(repo).path(session_id).read_text().splitlines()[1:]
    ]
    assert [r["through_turn"] for r in records if r["t"] == "summary"] == [2]
    loaded = service.load(session_id)
    notes = [e for e in loaded["transcript"] if e["kind"] == "note"]
    assert notes and "turns 1–2 were summarised" in notes[0]["text"]


async def test_a_failed_summary_leaves_the_session_as_it_was(
    repo: Path, scripted: ScriptedModel
) -> None:
    broken = _answer(summary={"status": 500, "error": "the summariser broke"})
    service, session_id = await _two_long_turns(repo, scripted, broken)
    before = service.open(session_id)
    _, outcome = await _ask(service, scripted, repo, "third: read big.txt", session_id, 6000)
    assert outcome.status == "failed"
    assert "summarising the earlier turns failed" in (outcome.reason or "")
    assert "the summariser broke" in (outcome.reason or "")
    after = service.open(session_id)
    assert after.summary is None
    # the earlier turns are all still there for the next try
    assert [e.message for e in after.entries][: len(before.entries)] == [
        e.message for e in before.entries
    ]
    assert service.claim(session_id)  # and the session is free again


async def test_a_refused_summary_says_so_and_leaves_the_session_as_it_was(
    repo: Path, scripted: ScriptedModel
) -> None:
    refused = _answer(summary={"refusal": "I cannot summarise this conversation."})
    service, session_id = await _two_long_turns(repo, scripted, refused)
    before = service.open(session_id)
    _, outcome = await _ask(service, scripted, repo, "third: read big.txt", session_id, 6000)
    assert outcome.status == "incomplete"
    assert outcome.reason == (
        "summarising the earlier turns failed: the model refused: "
        "I cannot summarise this conversation."
    )
    after = service.open(session_id)
    assert after.summary is None
    assert len(after.entries) == len(before.entries)


async def test_a_summary_the_request_limit_cannot_pay_for_is_not_made(
    repo: Path, scripted: ScriptedModel
) -> None:
    service, session_id = await _two_long_turns(repo, scripted, _answer())
    scripted.requests.clear()
    overrides = {"model": {"context_tokens": 6000}, "limits": {"max_llm_calls": 1}}
    _, outcome = await ask_in_session(
        service, scripted, repo, "third: read big.txt", session_id, overrides
    )
    assert outcome.status == "limit_reached"
    assert "max_llm_calls (1)" in (outcome.reason or "")
    assert scripted.requests == []  # neither the summary nor the turn was asked
    assert service.open(session_id).summary is None


async def test_a_turn_too_big_for_a_known_window_ends_with_a_reason(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.fallback = {"content": "ok"}
    service = SessionService(repo, lambda: load_config(repo))
    huge = "please read all of this: " + "word " * 4_000  # 20 KB of the person's own words
    _, outcome = await _ask(service, scripted, repo, huge, None, 4096)
    assert outcome.status == "failed"
    assert "this turn alone needs about" in (outcome.reason or "")
    assert "model.context_tokens" in (outcome.reason or "")
    assert scripted.requests == []  # nothing the endpoint would refuse was sent


async def test_over_a_guessed_window_the_request_goes_out_with_a_notice(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.fallback = {"content": "ok"}
    service = SessionService(repo, lambda: load_config(repo))
    claim = service.claim(new=True)
    outcome = await service.turn(
        claim,
        "read this: " + "word " * 12_000,
        config=load_config(repo),
        reviewer=AutoReviewer(Workspace(repo)),
        bus=EventBus(),
        endpoint=Endpoint(scripted.base_url, scripted.model),  # says nothing of its window
    )
    assert outcome.status == "completed" and len(scripted.requests) == 1
    log = json.loads(Path(outcome.log_path or "").read_text())
    notices = [e["message"] for e in log["events"] if e["type"] == "notice"]
    assert any("sent anyway (set model.context_tokens)" in n for n in notices)


@pytest.mark.parametrize("mode", ["native", "text"])
async def test_once_the_window_is_full_most_requests_begin_with_the_one_before(
    repo: Path, scripted: ScriptedModel, mode: str
) -> None:
    # A server that keeps the prompt it last read reads only what is new when a request begins
    # with the previous one; eliding one more output on every step would change an early
    # message each time, and a small machine would read the whole prompt again at every step.
    steps = 28
    for number in range(steps):
        (repo / f"part{number}.txt").write_text(f"part {number}: " + _big(40))

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        # counts a little denser than the estimate, and not the same ratio twice: the run
        # corrects its ratio from them at every step
        sent = len(json.dumps(body["messages"]))
        tokens = int(sent / (2.5 + done / 100))
        usage = {"prompt_tokens": tokens, "completion_tokens": 9, "total_tokens": tokens + 9}
        if done >= steps:
            return {"content": "read every part", "usage": usage}
        call = {"name": "read_file", "arguments": {"path": f"part{done}.txt"}}
        if mode == "text":
            return {"content": f"<tool:read_file>{json.dumps(call['arguments'])}</tool>"}
        return {"tool_calls": [call], "usage": usage}

    scripted.fallback = reply
    service = SessionService(repo, lambda: load_config(repo))
    overrides = {"model": {"context_tokens": 16_384}, "tool_calling": {"mode": mode}}
    _, outcome = await ask_in_session(service, scripted, repo, "read every part", None, overrides)
    assert outcome.status == "completed", outcome.reason
    budget = Budget(window=16_384)
    requests = [body["messages"] for body in scripted.requests]
    assert len(requests) == steps + 1
    assert max(_estimate(budget, body) for body in scripted.requests) <= budget.limit
    anew = [
        number
        for number in range(1, len(requests))
        if requests[number][: len(requests[number - 1])] != requests[number - 1]
    ]
    elided = [m for m in requests[-1] if "elided" in str(m.get("content"))]
    assert len(elided) >= steps // 2  # the window was full for half the run
    assert 2 <= len(anew) <= steps // 3, anew
    assert all(b - a > 2 for a, b in zip(anew, anew[1:], strict=False)), anew


async def test_six_long_reads_finish_in_a_4k_window_each_cut_to_the_room_left(
    repo: Path, scripted: ScriptedModel
) -> None:
    """As a new user sets a small local model up: a 4,000-token window, 1,024 for the answer,
    4,000 bytes an output, and a task that reads six 60 KB files."""
    names = [f"part{n}.txt" for n in range(6)]
    for name in names:
        (repo / name).write_text(_big(1_300)[:60_000])
    scripted.script = [tool_call("read_file", path=name) for name in names] + [
        tool_call("read_file", path="part0.txt", start_line=2, end_line=3),
        {"content": "Read all six."},
    ]
    overrides = {
        "model": {"context_tokens": 4000, "max_tokens": 1024},
        "tool_calling": {"retention": {"max_output_bytes": 4000}},
    }
    service = SessionService(repo, lambda: load_config(repo))
    _, outcome = await ask_in_session(
        service, scripted, repo, "Read part0.txt to part5.txt.", None, overrides
    )
    assert outcome.status == "completed", outcome.reason
    budget = Budget(window=4000, reserve=1024)
    assert len(scripted.requests) == 8
    assert max(_estimate(budget, body) for body in scripted.requests) <= budget.limit

    def tool_messages(body: dict[str, Any]) -> list[str]:
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]

    # Older reads are elided; the latest, cut to the room left, says how to read the rest.
    assert any(c.startswith("[output of read_file") for c in tool_messages(scripted.requests[6]))
    latest = json.loads(tool_messages(scripted.requests[6])[-1])
    assert latest["output_truncated"] is True
    assert "start_line and end_line" in latest["notes"][-1]
    part = json.loads(tool_messages(scripted.requests[7])[-1])
    assert part["data"] == {
        "path": "part0.txt",
        "content": "line 1 of a long output, padded to weigh something\n"
        "line 2 of a long output, padded to weigh something\n",
        "lines": f"2-3 of {len((repo / 'part0.txt').read_text().splitlines())}",
    }
