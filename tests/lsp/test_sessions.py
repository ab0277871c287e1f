"""Sessions over real stdio: asks that continue a conversation, and the session commands."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException
from tests.lsp.conftest import start_editor
from tests.lsp.harness import Editor
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.conversation.budget import Budget, message_bytes

ANSWER = "The README says it is a tiny project, nothing more; it has one heading and no text."


async def _error(editor: Editor, name: str, *args: Any) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await editor.command(name, *args)
    return str(caught.value)


async def _turn(editor: Editor, *args: Any) -> dict[str, Any]:
    """Ask, wait for this run's end, and return the answer with the events of the run."""
    started = await editor.command("toolgate.ask", *args)
    run_id = started["runId"]
    await editor.until(
        lambda: any(e["type"] == "run_finished" and e["runId"] == run_id for e in editor.events),
        60,
    )
    events = [e for e in editor.events if e.get("runId") == run_id]
    return {"runId": run_id, "sessionId": started["sessionId"], "events": events}


@pytest_asyncio.fixture
async def second_editor(repo: Path, options: dict[str, Any]) -> AsyncIterator[Editor]:
    """Another editor window on the same workspace: another server process."""
    ed = await start_editor(repo, options, "visual-studio-code")
    yield ed
    await ed.close()


async def test_two_asks_in_one_session_the_second_request_holds_the_first_turn(
    editor: Editor, repo: Path, scripted: ScriptedModel
) -> None:
    scripted.chunk = 1  # one character a delta: the server must coalesce them
    scripted.script = [
        tool_call("read_file", path="README.md"),
        {"content": ANSWER},
        {"content": "Le README dit que c'est un petit projet."},
    ]
    first = await _turn(editor, {"task": "What does the README say?"})
    second = await _turn(editor, {"task": "Now say it in French."})
    assert first["sessionId"] == second["sessionId"] and first["sessionId"].startswith("s-")

    messages = scripted.requests[2]["messages"]
    said = [(m["role"], m.get("content")) for m in messages if m["role"] != "system"]
    assert said[0] == ("user", "What does the README say?")
    assert any(m["role"] == "tool" and "Tiny project" in m["content"] for m in messages)
    assert ("assistant", ANSWER) in said
    assert said[-1] == ("user", "Now say it in French.")

    for turn in (first, second):
        assert all(e["sessionId"] == turn["sessionId"] for e in turn["events"])
    deltas = [e for e in first["events"] if e["type"] == "text_delta"]
    chunks = [e for e in first["events"] if e["type"] == "assistant_text"]
    assert "".join(e["text"] for e in deltas) == ANSWER
    assert len(chunks) == len(ANSWER) and len(deltas) < len(chunks) / 4  # coalesced

    listed = await editor.command("toolgate.listSessions")
    assert [(s["id"], s["turns"], s["title"]) for s in listed["sessions"]] == [
        (first["sessionId"], 2, "What does the README say?")
    ]
    loaded = await editor.command("toolgate.loadSession", {"sessionId": first["sessionId"]})
    kinds = [(e["kind"], e.get("name") or e.get("text")) for e in loaded["transcript"]]
    assert kinds == [
        ("user", "What does the README say?"),
        ("tool", "read_file"),
        ("assistant", ANSWER),
        ("run", None),
        ("user", "Now say it in French."),
        ("assistant", "Le README dit que c'est un petit projet."),
        ("run", None),
    ]
    tool = loaded["transcript"][1]
    assert tool["runId"] == first["runId"] and tool["status"] == "ok"
    assert tool["arguments"] == {"path": "README.md"} and tool["callId"]
    assert loaded["created"].endswith("Z") and loaded["lastActivity"] >= loaded["created"]


async def test_new_switch_rename_delete(
    editor: Editor, repo: Path, scripted: ScriptedModel
) -> None:
    scripted.fallback = {"content": "ok"}
    named = (await editor.command("toolgate.newSession", {"title": "flag work"}))["sessionId"]
    first = await _turn(editor, {"task": "one"})
    assert first["sessionId"] == named  # the new session became the current one
    other = await _turn(editor, {"task": "two", "newSession": True})
    assert other["sessionId"] != named
    back = await _turn(editor, {"task": "three", "sessionId": named})
    assert back["sessionId"] == named
    assert "one" in json.dumps(scripted.requests[-1]["messages"])
    assert "two" not in [m.get("content") for m in scripted.requests[-1]["messages"]]

    listed = (await editor.command("toolgate.listSessions", {}))["sessions"]
    assert [s["id"] for s in listed] == [named, other["sessionId"]]  # most recent first
    assert listed[0]["title"] == "flag work" and listed[0]["turns"] == 2

    renamed = await editor.command(
        "toolgate.renameSession", {"sessionId": named, "title": "the --verbose flag"}
    )
    assert renamed == {"sessionId": named, "title": "the --verbose flag"}
    assert await editor.command("toolgate.deleteSession", {"sessionId": other["sessionId"]}) == {
        "deleted": True
    }
    listed = (await editor.command("toolgate.listSessions"))["sessions"]
    assert [(s["id"], s["title"]) for s in listed] == [(named, "the --verbose flag")]
    empty = (await editor.command("toolgate.newSession"))["sessionId"]
    assert empty not in (named, other["sessionId"])


async def test_session_errors_name_the_session_or_file(
    editor: Editor, repo: Path, scripted: ScriptedModel
) -> None:
    scripted.fallback = {"content": "ok"}
    assert "unknown session 's-nope'" in await _error(
        editor, "toolgate.ask", {"task": "x", "sessionId": "s-nope"}
    )
    assert "unknown session 's-nope'" in await _error(
        editor, "toolgate.loadSession", {"sessionId": "s-nope"}
    )
    assert "not a session id" in await _error(
        editor, "toolgate.deleteSession", {"sessionId": "../../x"}
    )
    assert "sessionId" in await _error(editor, "toolgate.loadSession", {})
    assert "title" in await _error(editor, "toolgate.renameSession", {"sessionId": "s-x"})
    session_id = (await _turn(editor, {"task": "one"}))["sessionId"]
    path = repo / ".toolgate" / "sessions" / f"{session_id}.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"{garbage"
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    message = await _error(editor, "toolgate.loadSession", {"sessionId": session_id})
    assert str(path) in message and "line 3 is not valid JSON" in message
    message = await _error(editor, "toolgate.ask", {"task": "two", "sessionId": session_id})
    assert str(path) in message
    assert path.read_bytes() == before
    # the server goes on: a new session works
    assert (await _turn(editor, {"task": "three", "newSession": True}))["sessionId"] != session_id


async def test_a_session_another_editor_is_continuing_is_refused(
    editor: Editor, second_editor: Editor, repo: Path, scripted: ScriptedModel
) -> None:
    scripted.fallback = {"content": "ok"}
    session_id = (await _turn(editor, {"task": "one"}))["sessionId"]
    release = threading.Event()

    def held(body: dict[str, Any]) -> dict[str, Any]:
        release.wait(60)  # the turn lasts until the other editor has been refused
        return {"content": "ok"}

    scripted.script = [held]
    started = await editor.command("toolgate.ask", {"task": "two", "sessionId": session_id})
    try:
        message = await _error(
            second_editor, "toolgate.ask", {"task": "interleaved", "sessionId": session_id}
        )
    finally:
        release.set()
    assert session_id in message and "busy" in message
    await editor.until(
        lambda: any(
            e["type"] == "run_finished" and e["runId"] == started["runId"] for e in editor.events
        ),
        60,
    )
    third = await _turn(second_editor, {"task": "three", "sessionId": session_id})
    assert third["sessionId"] == session_id
    texts = [m.get("content") for m in scripted.requests[-1]["messages"]]
    assert "interleaved" not in texts and texts[-1] == "three" and "two" in texts


async def test_a_new_server_finds_the_session_and_continues_it(
    repo: Path, options: dict[str, Any], scripted: ScriptedModel
) -> None:
    scripted.fallback = {"content": "noted"}
    first = await start_editor(repo, options, "visual-studio-code")
    try:
        session_id = (await _turn(first, {"task": "remember the word kiwi"}))["sessionId"]
    finally:
        await first.client.shutdown_session()
        await first.client.stop()
    again = await start_editor(repo, options, "neovim")
    try:
        listed = (await again.command("toolgate.listSessions"))["sessions"]
        assert [s["id"] for s in listed] == [session_id]
        loaded = await again.command("toolgate.loadSession", {"sessionId": session_id})
        assert loaded["transcript"][0]["text"] == "remember the word kiwi"
        continued = await _turn(again, {"task": "which word?"})  # loading made it current
        assert continued["sessionId"] == session_id
        texts = [m.get("content") for m in scripted.requests[-1]["messages"]]
        assert "remember the word kiwi" in texts and texts[-1] == "which word?"
    finally:
        await again.client.shutdown_session()
        await again.client.stop()


async def test_a_long_session_stays_within_an_8k_window(
    editor: Editor, repo: Path, scripted: ScriptedModel
) -> None:
    (repo / ".toolgate").mkdir(exist_ok=True)
    (repo / ".toolgate" / "config.toml").write_text("[model]\ncontext_tokens = 8192\n")
    (repo / "big.txt").write_text("\n".join(f"row {n:05d} " + "y" * 40 for n in range(400)))

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]
        if not body.get("tools"):
            return {"content": "Notes: big.txt was read each turn."}
        if last["role"] == "tool":
            return {"content": "read"}
        return tool_call("read_file", path="big.txt")

    scripted.fallback = answer
    for number in range(12):
        turn = await _turn(editor, {"task": f"turn {number}: read big.txt"})
        finished = [e for e in turn["events"] if e["type"] == "run_finished"][0]
        assert finished["status"] == "completed", finished
    work = [b for b in scripted.requests if b.get("tools")]
    budget = Budget(window=8192)  # the documented estimate: bytes / 3 a message, plus 4
    biggest = max(
        budget.tokens(len(json.dumps(b["tools"])))
        + sum(budget.message_tokens(message_bytes(m)) for m in b["messages"])
        for b in work
    )
    assert biggest <= budget.limit == 6144
    fitted = [e for e in editor.events if e["type"] == "context_fitted"]
    assert fitted and all(e["sessionId"] == turn["sessionId"] for e in fitted)
