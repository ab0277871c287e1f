"""`toolgate acp` driven by the Python SDK's client over real stdio, against the scripted model."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import McpServerStdio
from tests.acp.client import RecordingClient, connect, prompt
from tests.acp.conftest import CALC, FIXED
from tests.engine.helpers import ScriptedReviewer, calls
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

from toolgate.agent.events import EventBus
from toolgate.config import load_config
from toolgate.session import Endpoint, SessionService
from toolgate.workspace import Workspace

pytestmark = pytest.mark.asyncio


def fix_script() -> list[Any]:
    """Read, edit, run the tests, answer."""
    return [
        tool_call("read_file", path="calc.py"),
        tool_call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        tool_call("run_tests"),
        {"content": "Fixed add: the tests pass."},
    ]


async def test_read_edit_allowed_once_through_the_editor_tests_and_end_turn(
    project: Path, scripted: ScriptedModel
) -> None:
    scripted.script = fix_script()
    client = RecordingClient(["allow_once"])
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await prompt(conn, session.session_id, "fix add")
    assert response.stop_reason == "end_turn"
    # the read shown as a tool call of kind read, at the file
    starts = client.kinds("tool_call")
    read = next(u for u in starts if u.title.startswith("read_file"))
    assert read.kind == "read" and read.locations[0].path == str(project / "calc.py")
    # the edit asked with diff content, then written through fs/write_text_file
    assert len(client.permissions) == 1
    diff = client.permissions[0].content[0]
    assert diff.type == "diff" and diff.old_text == CALC and "return a + b" in diff.new_text
    assert client.writes == [(str(project / "calc.py"), FIXED)]
    assert (project / "calc.py").read_text() == FIXED
    # run_tests ended with its summary
    ends = client.kinds("tool_call_update")
    texts = [c.content.text for u in ends for c in (u.content or []) if c.type == "content"]
    assert any("1 passed, 0 failed" in t for t in texts), texts
    # the streamed answer
    said = "".join(u.content.text for u in client.kinds("agent_message_chunk"))
    assert "Fixed add" in said
    # the API key the agent was started with is in no update and no question
    assert "sk-test-secret-key" not in repr(client.updates) + repr(client.permissions)
    # what the model was told
    assert last_tool_result(scripted.requests[2])["success"] is True
    assert "passed" in json.dumps(last_tool_result(scripted.requests[3]))


async def test_without_fs_the_change_lands_on_disk(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = fix_script()
    client = RecordingClient(["allow_once"])
    async with connect(client, scripted.base_url, fs=False) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await prompt(conn, session.session_id, "fix add")
    assert response.stop_reason == "end_turn"
    assert client.writes == []
    assert (project / "calc.py").read_text() == FIXED


async def test_rejection_is_told_to_the_model(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        {"content": "Understood, leaving it."},
    ]
    client = RecordingClient(["reject_once"])
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await prompt(conn, session.session_id, "fix add")
    assert response.stop_reason == "end_turn"
    assert (project / "calc.py").read_text() == CALC
    assert client.writes == []
    told = last_tool_result(scripted.requests[1])
    assert told["success"] is False and "reject" in json.dumps(told).lower()


async def test_allow_always_holds_for_that_session_only(
    project: Path, scripted: ScriptedModel
) -> None:
    def edit(old: str, new: str) -> dict[str, Any]:
        return tool_call("edit_file", path="calc.py", search=old, replace=new)

    scripted.script = [
        edit("a - b", "a + b"),
        edit("a + b", "b + a"),
        {"content": "one"},
        edit("b + a", "a + b"),
        {"content": "two"},
    ]
    client = RecordingClient(["allow_always", "reject_once"])
    async with connect(client, scripted.base_url) as (conn, _):
        first = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, first.session_id, "edit twice")
        assert len(client.permissions) == 1  # the second edit was not asked about
        assert client.offered == [["allow_once", "allow_always", "reject_once"]]
        assert (project / "calc.py").read_text() == "def add(a, b):\n    return b + a\n"
        second = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, second.session_id, "edit again")
    assert len(client.permissions) == 2  # a new session asks again
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return b + a\n"


async def test_cancel_mid_turn_answers_cancelled(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        {"content": "never"},
    ]
    client = RecordingClient()
    client.hold_permission = True
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        turn = asyncio.ensure_future(prompt(conn, session.session_id, "fix add"))
        await asyncio.wait_for(client.permission_asked.wait(), 60)
        await conn.cancel(session_id=session.session_id)
        response = await turn
    assert response.stop_reason == "cancelled"
    assert (project / "calc.py").read_text() == CALC
    assert len(scripted.requests) == 1


async def test_load_replays_a_stored_session_and_list_names_it(
    project: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [tool_call("read_file", path="calc.py"), {"content": "It subtracts."}]
    async with connect(RecordingClient(), scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "what does add do?")
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        listed = await conn.list_sessions(cwd=str(project))
        assert [s.session_id for s in listed.sessions] == [session.session_id]
        await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
        said = [u.content.text for u in client.kinds("user_message_chunk")]
        answered = [u.content.text for u in client.kinds("agent_message_chunk")]
        calls = [u.title for u in client.kinds("tool_call")]
        assert said == ["what does add do?"]
        assert "It subtracts." in "".join(answered)
        assert calls == ["read_file calc.py"]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        await conn.resume_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
        assert client.kinds("user_message_chunk") == []  # resumed, not replayed
        # and the loaded session goes on with its history
        scripted.script = [{"content": "Still subtracts."}]
        await prompt(conn, session.session_id, "and now?")
    contents = [m.get("content") for m in scripted.requests[-1]["messages"]]
    assert "what does add do?" in json.dumps(contents)


async def test_load_replays_each_call_with_the_status_it_ended_with_live(
    project: Path, scripted: ScriptedModel
) -> None:
    """Accepted and partly accepted changes replay `completed`; rejected and refused `failed`."""
    lines = [f"line {n}\n" for n in range(1, 13)]
    (project / "twelve.txt").write_text("".join(lines))
    both_ends = ["LINE 1\n", *lines[1:11], "LINE 12\n"]  # two hunks, one accepted
    scripted.script = [
        calls(
            ("write_file", {"path": "new.py", "content": "VALUE = 1\n"}),
            ("write_file", {"path": "twelve.txt", "content": "".join(both_ends)}),
            ("edit_file", {"path": "calc.py", "search": "a - b", "replace": "a + b"}),
            ("write_file", {"path": "../outside.py", "content": "x = 1\n"}),
        ),
        {"content": "Some of it landed."},
    ]
    service = SessionService(project, lambda: load_config(project))
    claim = service.claim(None, new=True)
    reviewer = ScriptedReviewer(Workspace(project), changes=[None, {0}, "keep the subtraction"])
    turn = await service.start(
        claim,
        "change things",
        config=load_config(project),
        reviewer=reviewer,
        bus=EventBus(),
        endpoint=Endpoint(scripted.base_url, scripted.model),
    )
    await service.finish(turn)
    assert (project / "new.py").exists() and (project / "calc.py").read_text() == CALC

    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        await conn.load_session(cwd=str(project), session_id=claim.session_id, mcp_servers=[])
    started = [u.title for u in client.kinds("tool_call")]
    assert started == [
        "write_file new.py",
        "write_file twelve.txt",
        "edit_file calc.py",
        "write_file ../outside.py",
    ]
    ended = client.kinds("tool_call_update")
    assert [u.status for u in ended] == ["completed", "completed", "failed", "failed"]
    said = [" ".join(c.content.text for c in u.content or []) for u in ended]
    assert "rejected" in said[2] and "keep the subtraction" in said[2], said[2]
    assert "outside" in said[3], said[3]


async def test_path_escape_is_refused_before_any_request(
    project: Path, scripted: ScriptedModel
) -> None:
    outside = project.parent / "outside.txt"
    outside.write_text("keep\n")
    scripted.script = [
        tool_call("write_file", path="../outside.txt", content="gone\n"),
        tool_call("read_file", path="/etc/passwd"),
        {"content": "refused"},
    ]
    client = RecordingClient(["allow_once", "allow_once"])
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "escape")
    assert outside.read_text() == "keep\n"
    assert client.writes == [] and client.reads == [] and client.permissions == []
    assert last_tool_result(scripted.requests[1])["success"] is False


async def test_prompt_before_new_and_unknown_session_are_errors(
    project: Path, scripted: ScriptedModel
) -> None:
    async with connect(RecordingClient(), scripted.base_url) as (conn, process):
        with pytest.raises(RequestError) as unknown:
            await prompt(conn, "no-such-session", "hello")
        assert unknown.value.code == -32602
        with pytest.raises(RequestError):
            await conn.load_session(cwd=str(project), session_id="nope", mcp_servers=[])
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        assert session.session_id
        with pytest.raises(RequestError):
            await conn.authenticate(method_id="password")
        await conn.authenticate(method_id="openai-api-key")
        assert process.returncode is None
    assert scripted.requests == []


async def test_config_options_profile_and_approval(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        {"content": "done"},
        tool_call("edit_file", path="calc.py", search="return a + b", replace="return b + a"),
        {"content": "refused"},
        {"content": "reviewed"},
    ]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        current = {o.id: o.current_value for o in session.config_options}
        assert current == {"profile": "developer", "approval": "ask"}
        with pytest.raises(RequestError):
            await conn.set_config_option(
                config_id="approval", session_id=session.session_id, value="always"
            )
        await conn.set_config_option(
            config_id="approval", session_id=session.session_id, value="auto-edits"
        )
        await prompt(conn, session.session_id, "fix add")
        assert client.permissions == []  # applied without asking
        assert (project / "calc.py").read_text() == FIXED
        await conn.set_config_option(
            config_id="approval", session_id=session.session_id, value="read-only"
        )
        await prompt(conn, session.session_id, "swap them")
        await conn.set_config_option(
            config_id="profile", session_id=session.session_id, value="reviewer"
        )
        await prompt(conn, session.session_id, "review it")
    assert client.permissions == []
    assert (project / "calc.py").read_text() == FIXED
    assert "denied" in json.dumps(last_tool_result(scripted.requests[3]))
    tools = [[t["function"]["name"] for t in r.get("tools", [])] for r in scripted.requests]
    assert "edit_file" in tools[2] and "edit_file" not in tools[4]


async def test_slash_tests_usage_and_commands(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = [tool_call("run_tests"), {"content": "one failure in test_add"}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "/tests")
    commands = client.kinds("available_commands_update")
    assert commands and "tests" in [c.name for c in commands[0].available_commands]
    asked = json.dumps(scripted.requests[0]["messages"])
    assert "Run the project's tests with run_tests" in asked
    usage = client.kinds("usage_update")
    assert usage and 0 < usage[-1].used < usage[-1].size
    texts = [
        c.content.text
        for u in client.kinds("tool_call_update")
        for c in (u.content or [])
        if c.type == "content"
    ]
    assert any("0 passed, 1 failed" in t for t in texts), texts


async def test_the_clients_mcp_servers_are_joined_and_gated(
    project: Path, scripted: ScriptedModel
) -> None:
    echo = Path(__file__).parents[1] / "mcp" / "echo_server.py"
    scripted.script = [tool_call("echo__echo", text="hello"), {"content": "said hello"}]
    client = RecordingClient(["allow_once"])
    server = McpServerStdio(name="echo", command=sys.executable, args=[str(echo)], env=[])
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[server])
        response = await prompt(conn, session.session_id, "say hello")
    assert response.stop_reason == "end_turn"
    offered = [t["function"]["name"] for t in scripted.requests[0]["tools"]]
    assert "echo__echo" in offered
    assert "hello" in json.dumps(last_tool_result(scripted.requests[1]))


async def test_cancel_while_the_model_is_asked(project: Path, scripted: ScriptedModel) -> None:
    scripted.delay = 5.0
    scripted.script = [{"content": "too late"}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        turn = asyncio.ensure_future(prompt(conn, session.session_id, "slow"))
        await asyncio.sleep(0.5)
        await conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(turn, 30)
        assert response.stop_reason == "cancelled"
        said = "".join(u.content.text for u in client.kinds("agent_message_chunk"))
        assert "too late" not in said
        scripted.delay = 0.0
        scripted.script = [{"content": "next turn"}]
        again = await prompt(conn, session.session_id, "again")  # the session is free again
    assert again.stop_reason == "end_turn"


async def test_reads_and_edits_see_the_editors_unsaved_buffer(
    project: Path, scripted: ScriptedModel
) -> None:
    unsaved = "def add(a, b):\n    return a - b  # unsaved\n"
    scripted.script = [
        tool_call("read_file", path="calc.py"),
        tool_call("edit_file", path="calc.py", search="a - b  # unsaved", replace="a + b"),
        {"content": "done"},
    ]
    client = RecordingClient(["allow_once"], write_to_disk=False)
    client.buffers[str(project / "calc.py")] = unsaved
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "fix add")
    assert client.reads == [str(project / "calc.py")] * 2
    assert last_tool_result(scripted.requests[1])["data"]["content"] == unsaved
    assert client.permissions[0].content[0].old_text == unsaved
    assert client.writes == [(str(project / "calc.py"), "def add(a, b):\n    return a + b\n")]
    assert (project / "calc.py").read_text() == CALC  # the editor saves it, not the agent


async def test_a_command_off_the_allow_list_is_asked_by_argv_and_never_always(
    project: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("run_command", command="touch made-by-agent"),
        tool_call("run_command", command="touch made-again"),
        {"content": "done"},
    ]
    # "allow_always" is not among the options; answering it anyway allows this once only
    client = RecordingClient(["allow_always", "reject_once"])
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await prompt(conn, session.session_id, "make a file")
    assert client.offered == [["allow_once", "reject_once"]] * 2  # each asked, never always
    shown = client.permissions[0].content[0].content.text
    assert "touch made-by-agent" in shown and "allow-list" in shown
    assert (project / "made-by-agent").exists() and not (project / "made-again").exists()
    told = last_tool_result(scripted.requests[2])
    assert told["success"] is False and "refused" in json.dumps(told)


async def test_a_failed_turn_says_why_and_ends(project: Path, scripted: ScriptedModel) -> None:
    scripted.script = [{"status": 400, "error": "the model is not loaded"}]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await prompt(conn, session.session_id, "hello")
    assert response.stop_reason == "end_turn"
    said = "".join(u.content.text for u in client.kinds("agent_message_chunk"))
    assert "The turn failed" in said and "not loaded" in said


async def test_a_limit_answers_max_turn_requests(project: Path, scripted: ScriptedModel) -> None:
    (project / ".toolgate").mkdir(exist_ok=True)
    (project / ".toolgate" / "config.toml").write_text("[limits]\nmax_steps = 1\n")
    scripted.script = [tool_call("read_file", path="calc.py"), {"content": "never"}]
    async with connect(RecordingClient(), scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await prompt(conn, session.session_id, "read it")
    assert response.stop_reason == "max_turn_requests"
    assert len(scripted.requests) == 1
