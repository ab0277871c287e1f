"""The text protocol end to end: servers that refuse or ignore `tools`, as they really are."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import git
from tests.engine.helpers import answer, drive, fast_pytest, system_text, tool_names
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.model.modes import ModeMemory

CODE = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def tag(name: str, **args: Any) -> str:
    """A call in the canonical syntax."""
    return f'<tool name="{name}" args>{json.dumps(args)}</tool>'


def result_blocks(body: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The <tool_result> blocks of the request's last user message: (name, success, payload)."""
    last = body["messages"][-1]
    assert last["role"] == "user", last
    found = re.findall(
        r'<tool_result name="([^"]+)" success="(true|false)">(.*?)</tool_result>',
        last["content"],
        re.S,
    )
    return [(name, ok, json.loads(payload.replace("<\\/", "</"))) for name, ok, payload in found]


def expect(check: Callable[[list[tuple[str, str, Any]]], None], reply: str) -> Any:
    """A script entry that checks the results the model reads, then answers `reply`."""

    def entry(body: dict[str, Any]) -> dict[str, Any]:
        check(result_blocks(body))
        return {"content": reply}

    return entry


def _wrote_both(blocks: list[tuple[str, str, Any]]) -> None:
    assert [(n, ok) for n, ok, _ in blocks] == [("write_file", "true"), ("write_file", "true")]


def _tests_pass(blocks: list[tuple[str, str, Any]]) -> None:
    ((name, ok, payload),) = blocks
    assert (name, ok) == ("run_tests", "true")
    assert payload["summary"]["passed"] == 1 and payload["summary"]["failed"] == 0


def _staged(blocks: list[tuple[str, str, Any]]) -> None:
    assert blocks[0][:2] == ("git_add", "true"), blocks


def _committed(blocks: list[tuple[str, str, Any]]) -> None:
    assert blocks[0][:2] == ("git_commit", "true"), blocks


def scenario() -> list[Any]:
    """Write code and its test, run the tests, stage, commit — all as text calls."""
    return [
        {
            "content": "I will write the function and its test.\n"
            + tag("write_file", path="calc.py", content=CODE)
            + "\n"
            + tag("write_file", path="test_calc.py", content=TESTS)
        },
        expect(_wrote_both, "Now the tests.\n" + tag("run_tests")),
        expect(_tests_pass, tag("git_add", files=["calc.py", "test_calc.py"])),
        expect(_staged, tag("git_commit", message="Add add() with a test")),
        expect(_committed, "Done: add() is written, tested and committed."),
    ]


def modes(repo: Path) -> dict[str, Any]:
    """What .toolgate/state.json remembers."""
    return json.loads((repo / ".toolgate" / "state.json").read_text())["tool_calling_modes"]


@pytest.mark.parametrize(
    "reject",
    [True, "tools param requires --jinja flag"],
    ids=["http-400", "llama-server-500-jinja"],
)
async def test_endpoint_rejecting_tools_switches_to_text(
    repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch, reject: bool | str
) -> None:
    fast_pytest(monkeypatch)
    scripted.reject_tools = reject
    scripted.script = scenario()
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed", driven.outcome
    assert driven.outcome.answer == "Done: add() is written, tested and committed."
    assert (repo / "calc.py").read_text() == CODE
    assert git(repo, "log", "-1", "--format=%s").strip() == "Add add() with a test"
    assert git(repo, "status", "--porcelain").strip() == ""
    # remembered per base URL and model, and recorded in the run log
    assert modes(repo)[f"{scripted.base_url}|scripted-model"]["mode"] == "text"
    assert driven.log["tool_calling_mode"] == "text"
    assert [e["mode"] for e in driven.of_type("tool_calling_mode_changed")] == ["text"]
    # after the refusal no request carries tools; the prompt carries them instead
    answered = [b for b in scripted.requests if not b.get("tools")]
    assert len(answered) == 5 and scripted.requests[-1] is answered[-1]
    prompt = system_text(answered[0])
    assert "TOOLS:\n- name: " in prompt and "END TOOLS" in prompt
    assert '<tool name="NAME" args>' in prompt
    assert all(m["role"] != "tool" for b in answered for m in b["messages"])
    calls = [c for step in driven.log["steps"] for c in step["calls"]]
    assert [c["name"] for c in calls] == [
        "write_file",
        "write_file",
        "run_tests",
        "git_add",
        "git_commit",
    ]
    assert {c["syntax"] for c in calls} == {"tag"}
    assert [c["decision"] for c in calls] == [
        "approved",
        "approved",
        "auto",
        "approved",
        "approved",
    ]


async def test_remembered_text_mode_sends_no_tools_next_time(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.reject_tools = True
    scripted.script = [{"content": tag("git_status")}, answer("first")]
    await drive(repo, scripted)
    first_run = len(scripted.requests)
    scripted.script = [{"content": tag("git_status")}, answer("second")]
    driven = await drive(repo, scripted)
    assert driven.outcome.answer == "second"
    assert [tool_names(b) for b in scripted.requests[first_run:]] == [[], []]
    assert driven.log["tool_calling_mode"] == "text"


def _learned_long_ago(repo: Path, table: str, *, days: int | None) -> None:
    """Age every entry of a state.json table by `days` (None: no time, as older versions)."""
    state_file = repo / ".toolgate" / "state.json"
    state = json.loads(state_file.read_text())
    for entry in state[table].values():
        if days is None:
            del entry["learned_at"]
        else:
            learned = datetime.fromisoformat(entry["learned_at"])
            entry["learned_at"] = (learned - timedelta(days=days)).isoformat()
    state_file.write_text(json.dumps(state))


@pytest.mark.parametrize("days", [8, None], ids=["a-week-ago", "no-time"])
async def test_a_learned_mode_is_learned_again_after_a_week(
    repo: Path, scripted: ScriptedModel, days: int | None
) -> None:
    """The server was upgraded since it refused tools: they are offered again, and kept."""
    scripted.reject_tools = True
    scripted.script = [{"content": tag("git_status")}, answer("first")]
    await drive(repo, scripted)
    (learned,) = modes(repo).values()
    assert learned["mode"] == "text"
    age = datetime.now(timezone.utc) - datetime.fromisoformat(learned["learned_at"])
    assert timedelta(0) <= age < timedelta(minutes=5)

    # Six days on, it still holds.
    _learned_long_ago(repo, "tool_calling_modes", days=6)
    asked = len(scripted.requests)
    scripted.script = [{"content": tag("git_status")}, answer("second")]
    await drive(repo, scripted)
    assert tool_names(scripted.requests[asked]) == []

    _learned_long_ago(repo, "tool_calling_modes", days=days)
    scripted.reject_tools = False
    asked = len(scripted.requests)
    scripted.script = [tool_call("git_status"), answer("third")]
    driven = await drive(repo, scripted)
    assert driven.outcome.answer == "third"
    assert "git_status" in tool_names(scripted.requests[asked])
    assert driven.log["tool_calling_mode"] == "native"


def test_each_thing_learned_about_an_endpoint_is_learned_again_after_a_week(
    repo: Path,
) -> None:
    memory = ModeMemory(repo)
    memory.remember("http://h/v1", "m", "text", "tools refused")
    memory.remember_no_tool_streaming("http://h/v1", "m", "empty stream")
    memory.remember_structured_output("http://h/v1", "m", "json_object", "json_schema refused")
    learned = ("text", False, "json_object")
    unknown = (None, True, None)

    def known() -> tuple[str | None, bool, str | None]:
        return (
            memory.get("http://h/v1", "m"),
            memory.streams_tools("http://h/v1", "m"),
            memory.structured_output("http://h/v1", "m"),
        )

    assert known() == learned
    for table in ("tool_calling_modes", "tools_no_streaming", "structured_output"):
        _learned_long_ago(repo, table, days=6)
    assert known() == learned
    for table in ("tool_calling_modes", "tools_no_streaming", "structured_output"):
        _learned_long_ago(repo, table, days=2)
    assert known() == unknown
    memory.remember("http://h/v1", "m", "text", "tools refused again")
    assert memory.get("http://h/v1", "m") == "text"


@pytest.mark.parametrize(
    "written",
    [
        tag("write_file", path="note.txt", content="from text\n"),
        '<tool_call>{"name": "write_file", "arguments": '
        '{"path": "note.txt", "content": "from text\\n"}}</tool_call>',
    ],
    ids=["canonical", "hermes"],
)
async def test_server_ignoring_tools_is_noticed(
    repo: Path, scripted: ScriptedModel, written: str
) -> None:
    # llama-cpp-python with a chat format without tools: HTTP 200, and the call is text.
    scripted.script = [
        {"content": "Writing it.\n" + written},
        lambda body: {"content": "ok " + result_blocks(body)[0][1]},
    ]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed", driven.outcome
    assert (repo / "note.txt").read_text() == "from text\n"
    assert driven.outcome.answer == "ok true"
    assert tool_names(scripted.requests[0]) != []
    assert tool_names(scripted.requests[1]) == []
    assert modes(repo)[f"{scripted.base_url}|scripted-model"]["mode"] == "text"
    assert driven.log["tool_calling_mode"] == "text"


async def test_explicit_native_is_never_overridden(repo: Path, scripted: ScriptedModel) -> None:
    scripted.reject_tools = True
    driven = await drive(repo, scripted, overrides={"tool_calling": {"mode": "native"}})
    assert driven.outcome.status == "failed"
    assert "rejected tools" in driven.outcome.reason
    assert all(b.get("tools") for b in scripted.requests)
    assert not (repo / ".toolgate" / "state.json").exists()
    assert driven.log["tool_calling_mode"] == "native"


async def test_explicit_text_mode_never_sends_tools(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [{"content": tag("read_file", path="README.md")}, answer()]
    driven = await drive(repo, scripted, overrides={"tool_calling": {"mode": "text"}})
    assert [tool_names(b) for b in scripted.requests] == [[], []]
    ((name, ok, payload),) = result_blocks(scripted.requests[1])
    assert (name, ok, payload["content"]) == ("read_file", "true", "# Tiny project\n")
    assert driven.log["tool_calling_mode"] == "text"


async def test_text_parse_errors_get_one_corrective_message(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        {
            "content": '<tool name="write_file" args>{"path": "a.txt", "content": }</tool>\n'
            + tag("read_file", path="README.md")
            + '\n<tool name="launch_rockets" args>{}</tool>'
        },
        answer(),
    ]
    driven = await drive(repo, scripted, overrides={"tool_calling": {"mode": "text"}})
    last = scripted.requests[1]["messages"][-1]
    assert last["role"] == "user"
    assert [m["role"] for m in scripted.requests[1]["messages"]].count("user") == 2
    content = last["content"]
    assert content.count("could not be read") == 1
    assert '<tool name="NAME" args>' in content
    assert "launch_rockets" in content
    assert [b[:2] for b in result_blocks(scripted.requests[1])] == [("read_file", "true")]
    assert not (repo / "a.txt").exists()
    errors = driven.of_type("tool_call_parse_error")
    assert len(errors) == 2 and all(e["raw_excerpt"] and e["error"] for e in errors)
    assert driven.log["metrics"]["tool_call_parse_errors_total"] == 2


async def test_tool_calling_disabled_is_a_plain_chat(repo: Path, scripted: ScriptedModel) -> None:
    text = "You could run " + tag("write_file", path="note.txt", content="x")
    scripted.script = [{"content": text}]
    driven = await drive(repo, scripted, overrides={"tool_calling": {"enabled": False}})
    assert driven.outcome.status == "completed"
    assert driven.outcome.answer == text
    (body,) = scripted.requests
    assert "tools" not in body and "tool_choice" not in body
    assert "TOOLS:" not in system_text(body)
    assert not (repo / "note.txt").exists()
    assert driven.of_type("tool_call_parse_error") == []
    assert driven.of_type("tool_call_proposed") == []


async def test_streamed_prose_is_said_whole_and_before_the_call_it_precedes(
    repo: Path, scripted: ScriptedModel
) -> None:
    # Prose is passed on at most every so often while it streams (the parser works it out
    # when asked), but all of it arrives, in order, and what precedes a call before the call
    # is handled (the prose after it streams on meanwhile).
    before = "Let me read it first. " * 30 + "`inline` code and a\n\n```python\nx = 1\n```\n"
    scripted.chunk = 3
    scripted.script = [
        {"content": before + tag("read_file", path="README.md") + "\nThen I answer."},
        answer("All read."),
    ]
    driven = await drive(repo, scripted, overrides={"tool_calling": {"mode": "text"}})
    said = [
        (i, e.to_dict()["text"]) for i, e in enumerate(driven.events) if e.type == "assistant_text"
    ]
    proposed = next(i for i, e in enumerate(driven.events) if e.type == "tool_call_proposed")
    assert "".join(text for _, text in said) == before + "\nThen I answer.All read."
    assert "".join(text for i, text in said if i < proposed).startswith(before)
