"""What a turn shows the editor beyond the calls: results, thinking, the plan, stop reasons,
slash commands and modes — driven by the Python SDK's client over real stdio."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from tests.acp.client import RecordingClient, connect, prompt
from tests.acp.conftest import CALC, FIXED
from tests.conftest import git
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

from toolgate.conversation.store import SessionStore

pytestmark = pytest.mark.asyncio


def ended(client: RecordingClient) -> dict[str, Any]:
    """The last `tool_call_update` of each call that ended, by call id."""
    return {
        u.tool_call_id: u
        for u in client.kinds("tool_call_update")
        if u.status in ("completed", "failed")
    }


def texts(update: Any) -> str:
    return "\n".join(c.content.text for c in update.content or [] if c.type == "content")


def said(client: RecordingClient, kind: str = "agent_message_chunk") -> str:
    return "".join(u.content.text for u in client.kinds(kind))


async def test_results_are_shown_in_the_calls(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("read_file", path="calc.py"),
        tool_call("list_directory", path="."),
        tool_call("search_code", pattern="return"),
        tool_call("run_tests"),
        {"content": "add subtracts"},
    ]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "look")
    calls = {u.title.split()[0]: u.tool_call_id for u in client.kinds("tool_call")}
    done = ended(client)
    assert "return a - b" in texts(done[calls["read_file"]])
    listing = texts(done[calls["list_directory"]])
    assert "calc.py" in listing and "test_calc.py" in listing
    assert "calc.py:2" in texts(done[calls["search_code"]])
    tests = done[calls["run_tests"]]
    assert tests.status == "completed"
    shown = texts(tests)
    assert "0 passed, 1 failed" in shown
    assert "test_calc.py:5: test_calc.py::test_add" in shown and "assert" in shown
    assert [(loc.path, loc.line) for loc in tests.locations] == [(str(project / "test_calc.py"), 5)]


async def test_a_long_read_is_excerpted(project: Path, scripted: ScriptedModel) -> None:
    (project / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 501)))
    scripted.script = [tool_call("read_file", path="long.txt"), {"content": "long"}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "read it")
    shown = texts(next(iter(ended(client).values())))
    assert shown.startswith("line 1\n") and "line 40\n" in shown and "line 41" not in shown
    assert "500 lines in all" in shown
    assert "line 500" in last_tool_result(scripted.requests[1])["data"]["content"]


async def test_reasoning_and_think_blocks_are_thoughts(
    project: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        {**tool_call("read_file", path="calc.py"), "reasoning": "First I read calc.py."},
        {
            "content": "<think>It uses minus.</think>add subtracts.",
            "reasoning": "",
        },
        {
            "content": "Still subtracts.",
            "reasoning": "Same as before.",
            "reasoning_field": "reasoning",
        },
    ]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "what does add do?")
        thought_first = said(client, "agent_thought_chunk")
        await prompt(conn, session.session_id, "and now?")
    assert thought_first == "First I read calc.py.It uses minus."
    assert said(client, "agent_thought_chunk").endswith("Same as before.")
    message = said(client)
    assert "add subtracts." in message and "Still subtracts." in message
    assert "think" not in message and "minus" not in message
    # the thought comes before the call it led to
    kinds = [getattr(u, "session_update", "") for u in client.updates]
    assert kinds.index("agent_thought_chunk") < kinds.index("tool_call")
    # a replayed session shows the kept <think> block as thought again
    replay = RecordingClient()
    async with connect(replay, scripted.base_url) as (conn, _):
        await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
    assert said(replay, "agent_thought_chunk") == "It uses minus."
    assert "add subtracts." in said(replay) and "think>" not in said(replay)


async def test_the_models_plan_is_shown_and_replayed(
    project: Path, scripted: ScriptedModel
) -> None:
    first = [
        {"step": "Read calc.py", "status": "in_progress"},
        {"step": "Fix add", "status": "pending", "priority": "high"},
    ]
    second = [
        {"step": "Read calc.py", "status": "completed"},
        {"step": "Fix add", "status": "in_progress", "priority": "high"},
    ]
    scripted.script = [
        tool_call("update_plan", plan=first, explanation="two steps"),
        tool_call("update_plan", plan=second),
        tool_call("update_plan", plan=[{"step": "x", "status": "someday"}]),
        {"content": "planned"},
    ]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "plan the fix")
    plans = [[(e.content, e.status, e.priority) for e in u.entries] for u in client.kinds("plan")]
    assert plans == [
        [("Read calc.py", "in_progress", "medium"), ("Fix add", "pending", "high")],
        [("Read calc.py", "completed", "medium"), ("Fix add", "in_progress", "high")],
    ]
    assert [u.title for u in client.kinds("tool_call")] == []  # a plan, not a call card
    assert "update_plan" in [t["function"]["name"] for t in scripted.requests[0]["tools"]]
    assert last_tool_result(scripted.requests[1])["success"] is True
    assert last_tool_result(scripted.requests[3])["success"] is False  # not a status
    replay = RecordingClient()
    async with connect(replay, scripted.base_url) as (conn, _):
        await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
    assert [len(u.entries) for u in replay.kinds("plan")] == [2, 2]


async def test_stop_reasons_max_tokens_and_refusal(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        {"content": "The answer was cut", "finish_reason": "length"},
        {"content": "I cannot", "finish_reason": "content_filter"},
        {"content": "fine"},
    ]
    async with connect(RecordingClient(), scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        cut = await prompt(conn, session.session_id, "a long answer")
        filtered = await prompt(conn, session.session_id, "something filtered")
        fine = await prompt(conn, session.session_id, "something else")
    assert (cut.stop_reason, filtered.stop_reason, fine.stop_reason) == (
        "max_tokens",
        "refusal",
        "end_turn",
    )


async def test_the_models_refusal_is_the_answer_and_the_stop_reason(
    project: Path, scripted: ScriptedModel
) -> None:
    refusal = "I can't help with that."
    # OpenAI streams a refusal in `refusal` deltas and ends it with finish reason "stop".
    scripted.script = [{"refusal": refusal}, {"content": "fine"}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        refused = await prompt(conn, session.session_id, "something it refuses")
        shown = said(client)
        fine = await prompt(conn, session.session_id, "something else")
    assert (refused.stop_reason, fine.stop_reason) == ("refusal", "end_turn")
    assert shown == refusal
    assert len(scripted.requests) == 2  # the refusal was not asked again without streaming
    kept = [m for m in scripted.requests[1]["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in kept] == [refusal]  # the model sees what it said


async def test_calls_the_policy_keeps_denying_end_in_refusal(
    project: Path, scripted: ScriptedModel
) -> None:
    (project / ".toolgate").mkdir(exist_ok=True)
    (project / ".toolgate" / "config.toml").write_text("[limits]\nmax_tool_retries = 0\n")
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        {"content": "never"},
    ]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await conn.set_config_option(
            config_id="approval", session_id=session.session_id, value="read-only"
        )
        response = await prompt(conn, session.session_id, "fix add")
    assert response.stop_reason == "refusal"
    assert client.permissions == [] and (project / "calc.py").read_text() == CALC


def offered(client: RecordingClient) -> list[str]:
    return [c.name for c in client.kinds("available_commands_update")[-1].available_commands]


async def test_undo_asks_with_the_diff_and_puts_the_run_back(
    project: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        tool_call("write_file", path="notes.txt", content="new\n"),
        {"content": "fixed"},
        {"content": "add subtracts again"},
    ]
    client = RecordingClient(["allow_once", "allow_once", "reject_once", "allow_once"])
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        assert offered(client) == ["tests", "review", "new", "rewind"]  # nothing to undo yet
        await prompt(conn, session.session_id, "fix add")
        assert offered(client) == ["tests", "review", "new", "undo", "rewind"]
        assert (project / "calc.py").read_text() == FIXED
        kept = await prompt(conn, session.session_id, "/undo")
        assert kept.stop_reason == "end_turn"
        assert (project / "calc.py").read_text() == FIXED and (project / "notes.txt").exists()
        undone = await prompt(conn, session.session_id, "/undo")
        assert undone.stop_reason == "end_turn"
        await prompt(conn, session.session_id, "and now?")
    # The next turn tells the model, and the session keeps the undo where it happened.
    told = scripted.requests[3]["messages"][-1]["content"]
    assert told.startswith("[Since your last answer]\n- the person undid the changes of turn 1")
    assert "as they were before it: calc.py, notes.txt\n" in told and told.endswith("and now?")
    records = SessionStore(project).open(session.session_id).load(project).records
    assert [r["t"] for r in records if r["t"] in ("turn", "undo")] == ["turn", "undo", "turn"]
    asked = client.permissions[3]
    diff = next(c for c in asked.content if c.type == "diff")
    assert (diff.path, diff.old_text, diff.new_text) == (str(project / "calc.py"), FIXED, CALC)
    assert any("notes.txt: removed" in c.content.text for c in asked.content if c.type == "content")
    assert (project / "calc.py").read_text() == CALC and not (project / "notes.txt").exists()
    assert client.writes[-1] == (str(project / "calc.py"), CALC)  # through the editor
    message = said(client)
    assert "Left as it is" in message and "restored 2 files" in message
    assert len(scripted.requests) == 4  # the model was not asked about the commands


@pytest.mark.parametrize("run_saved", [True, False], ids=["run-saved", "all-unsaved"])
async def test_undoing_an_undo_that_wrote_an_unsaved_buffer_brings_the_run_back(
    project: Path, scripted: ScriptedModel, run_saved: bool
) -> None:
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        {"content": "fixed"},
    ]
    calc = str(project / "calc.py")
    client = RecordingClient(["allow_once"] * 3, write_to_disk=run_saved)
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "fix add")
        client.write_to_disk = False  # the editor keeps what the undo writes unsaved
        await prompt(conn, session.session_id, "/undo")
        assert client.buffers[calc] == CALC
        again = await prompt(conn, session.session_id, "/undo")
    assert again.stop_reason == "end_turn"
    message = said(client)
    assert "changed since" not in message and "left alone" not in message, message
    assert message.count("restored 1 file") == 2
    assert client.buffers[calc] == FIXED  # the run's change is back, in the editor's buffer
    assert client.writes[-1] == (calc, FIXED)
    # the disk was never written by the agent: the editor saves when the person says so
    assert (project / "calc.py").read_text() == (FIXED if run_saved else CALC)


def _committed_then_fixed(project: Path) -> None:
    """calc.py committed as it is, then fixed in the working tree: a change to review."""
    git(project, "add", ".")
    git(project, "commit", "-qm", "calc")
    (project / "calc.py").write_text(FIXED)


async def test_review_shows_the_models_comments_and_changes_nothing(
    project: Path, scripted: ScriptedModel
) -> None:
    _committed_then_fixed(project)
    comment = {
        "path": "calc.py",
        "line": 2,
        "severity": "warning",
        "message": "no test adds negative numbers",
        "suggestion": "    return b + a",
    }
    longer = {
        **comment,
        "severity": "hint",
        "message": "say why",
        "suggestion": "    # sum\n    return a + b",
    }
    review = {"approved": False, "comments": [comment, longer]}
    scripted.script = [{"content": json.dumps(review)}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await prompt(conn, session.session_id, "/review")
        assert (project / "calc.py").read_text() == FIXED  # the review changed nothing
        (project / "calc.py").write_text(CALC)
        clean = await prompt(conn, session.session_id, "/review")
    assert response.stop_reason == clean.stop_reason == "end_turn"
    message = said(client)
    assert "Review of 1 changed file: not approved: 1 warning, 1 hint." in message
    assert "- `calc.py:2` warning: no test adds negative numbers" in message
    assert "suggested: `    return b + a`" in message
    assert (
        "- `calc.py:2` hint: say why\n  suggested:\n  ```\n      # sum\n      return a + b\n  ```"
        in message
    )
    assert "Nothing to review: the working tree has no changes against HEAD." in message
    [request] = scripted.requests  # the clean tree was not sent to the model
    assert request["response_format"]["type"] == "json_schema"
    assert "+     return a + b" in request["messages"][1]["content"]
    assert client.permissions == [] and client.writes == []


async def test_a_review_is_cancelled_while_the_model_is_asked(
    project: Path, scripted: ScriptedModel
) -> None:
    _committed_then_fixed(project)
    late = {"approved": False, "comments": [{"path": "calc.py", "line": 2, "message": "late"}]}
    scripted.script = [{"content": json.dumps(late), "sleep": 5}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        turn = asyncio.ensure_future(prompt(conn, session.session_id, "/review"))
        for _ in range(300):
            if scripted.requests:
                break
            await asyncio.sleep(0.1)
        await conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(turn, 3)  # not the model's five seconds
        assert response.stop_reason == "cancelled"
        assert "Review of" not in said(client)
        scripted.script = [{"content": json.dumps({"approved": True, "comments": []})}]
        again = await prompt(conn, session.session_id, "/review")  # the session is free again
    assert again.stop_reason == "end_turn"
    assert "approved" in said(client)


async def test_undo_with_nothing_to_undo_says_so(project: Path, scripted: ScriptedModel) -> None:
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await prompt(conn, session.session_id, "/undo")
    assert response.stop_reason == "end_turn"
    assert "Nothing to undo" in said(client) and client.permissions == []
    assert scripted.requests == []


async def test_new_sets_the_earlier_turns_aside(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = [{"content": "It subtracts."}, {"content": "What add?"}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "remember: add subtracts")
        await prompt(conn, session.session_id, "/new")
        await prompt(conn, session.session_id, "what did I say?")
    assert "turns 1–1" in said(client)
    assert len(scripted.requests) == 2
    assert "add subtracts" not in json.dumps(scripted.requests[1]["messages"])
    replay = RecordingClient()
    async with connect(replay, scripted.base_url) as (conn, _):
        await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
    said_then = [u.content.text for u in replay.kinds("user_message_chunk")]
    assert said_then == ["remember: add subtracts", "what did I say?"]


async def test_modes_follow_the_approval_policy(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        {"content": "done"},
    ]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        assert session.modes.current_mode_id == "ask"
        modes = [m.id for m in session.modes.available_modes]
        assert modes == ["ask", "auto-edits", "read-only"]
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        await conn.set_session_mode(session_id=session.session_id, mode_id="auto-edits")
        await prompt(conn, session.session_id, "fix add")
        await conn.set_config_option(
            config_id="approval", session_id=session.session_id, value="read-only"
        )
        await asyncio.sleep(0.5)  # the notification may follow the answer
    assert client.permissions == [] and (project / "calc.py").read_text() == FIXED
    changed = client.kinds("config_option_update")
    assert {o.id: o.current_value for o in changed[0].config_options}["approval"] == "auto-edits"
    assert [u.current_mode_id for u in client.kinds("current_mode_update")] == ["read-only"]
    # the change applied without a question still shows its diff in the call
    diffs = [
        c for u in client.kinds("tool_call_update") for c in u.content or [] if c.type == "diff"
    ]
    assert diffs and diffs[0].old_text == CALC and diffs[0].new_text == FIXED


async def test_usage_is_the_endpoints_count_where_it_gives_one(
    project: Path, scripted: ScriptedModel
) -> None:
    counted = {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}
    scripted.script = [{"content": "counted", "usage": counted}, {"content": "estimated"}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "one")
        await prompt(conn, session.session_id, "two")
    first, second = [(u.used, u.size) for u in client.kinds("usage_update")]
    assert first[0] == 920 and first[1] > 920
    assert 0 < second[0] < 900  # no count from the endpoint: the conversation's estimate


async def test_load_and_resume_send_the_sessions_usage(
    project: Path, scripted: ScriptedModel
) -> None:
    counted = {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}
    scripted.script = [{"content": "counted", "usage": counted}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        assert client.kinds("usage_update") == []  # nothing is known of a new session
        await prompt(conn, session.session_id, "one")
    [after_prompt] = [(u.used, u.size) for u in client.kinds("usage_update")]
    assert after_prompt[0] == 920 and after_prompt[1] > 920
    replay = RecordingClient()
    async with connect(replay, scripted.base_url) as (conn, _):
        await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
        loaded = [(u.used, u.size) for u in replay.kinds("usage_update")]
    assert loaded == [after_prompt]
    kinds = [getattr(u, "session_update", "") for u in replay.updates]
    assert kinds.index("agent_message_chunk") < kinds.index("usage_update")  # after the replay
    resumed = RecordingClient()
    async with connect(resumed, scripted.base_url) as (conn, _):
        await conn.resume_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
        assert [(u.used, u.size) for u in resumed.kinds("usage_update")] == [after_prompt]
    assert len(scripted.requests) == 1  # neither asked the model anything


async def test_without_streaming_reasoning_and_finish_reason_still_count(
    project: Path, scripted: ScriptedModel
) -> None:
    (project / ".toolgate").mkdir(exist_ok=True)
    (project / ".toolgate" / "config.toml").write_text("[model]\nstream = false\n")
    scripted.script = [
        {"content": "Cut sho", "reasoning": "Thinking unstreamed.", "finish_reason": "length"}
    ]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await prompt(conn, session.session_id, "answer")
    assert not scripted.requests[0].get("stream")
    assert response.stop_reason == "max_tokens"
    assert said(client, "agent_thought_chunk") == "Thinking unstreamed."
    assert said(client) == "Cut sho"
