"""A call written as text while native tools are offered: a failed call, never the final answer.

The answers are the ones a real llama-cpp-python server gave with the embedded model
(tests/local/test_local_text_in_native.py runs those for real): `functions.write_file:` with
`--chat_format chatml-function-calling`, `{"name": "run_greet", "arguments": {…}}` with the
model's own template.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import answer, drive, system_text, tool_names
from tests.support.scripted_model import ScriptedModel, tool_call

INVENTED = '{"name": "run_greet", "arguments": {"message": "Hello, World!"}}'
HELLO = "def hello():\n    return 'hello'\n"


def tag(name: str, **args: Any) -> str:
    """A call in the canonical text syntax."""
    return f'<tool name="{name}" args>{json.dumps(args)}</tool>'


def told(body: dict[str, Any]) -> str:
    """What the last message of a request tells the model (a user message)."""
    last = body["messages"][-1]
    assert last["role"] == "user", last
    return str(last["content"])


def then(check: Callable[[dict[str, Any]], None], entry: dict[str, Any]) -> Any:
    """A script entry that checks the request it answers, then answers `entry`."""

    def answer_it(body: dict[str, Any]) -> dict[str, Any]:
        check(body)
        return entry

    return answer_it


def remembered(repo: Path) -> dict[str, Any]:
    """What .toolgate/state.json remembers of tool-calling modes ({} when nothing)."""
    state = repo / ".toolgate" / "state.json"
    if not state.exists():
        return {}
    return dict(json.loads(state.read_text()).get("tool_calling_modes", {}))


def written_entries(log: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls the run log records as written as text."""
    return [c for step in log["steps"] for c in step["calls"] if c.get("written_as_text")]


async def test_an_invented_tool_is_answered_as_unknown_with_the_real_tools(
    repo: Path, scripted: ScriptedModel
) -> None:
    def unknown_named(body: dict[str, Any]) -> None:
        said = told(body)
        assert "no tool ran: unknown tool 'run_greet'; available: " in said
        assert "read_file" in said and "write_file" in said and "run_tests" in said
        assert "tool-calling interface" in said
        assert "write_file" in tool_names(body)  # still asked with native tools

    scripted.script = [
        {"content": INVENTED},
        then(unknown_named, tool_call("write_file", path="hello.py", content=HELLO)),
        answer("hello.py is written."),
    ]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed", driven.outcome
    assert driven.outcome.answer == "hello.py is written."
    assert (repo / "hello.py").read_text() == HELLO
    (entry,) = written_entries(driven.log)
    assert entry["decision"] == "denied" and entry["raw_excerpt"] == INVENTED
    assert entry["error"].startswith("unknown tool 'run_greet'")
    (error,) = driven.of_type("tool_call_parse_error")
    assert error["raw_excerpt"] == INVENTED
    # told once: the endpoint is still asked natively, and nothing is remembered
    assert driven.log["tool_calling_mode"] == "native"
    assert driven.of_type("tool_calling_mode_changed") == []
    assert remembered(repo) == {}


SHAPES = {
    "functions-stub": (
        "functions.write_file:",
        "the call to 'write_file' ends before its arguments",
    ),
    "tool-call-tag-alone": ("<tool_call>", "unclosed <tool_call>"),
    "cut-short-name-paren": (
        'write_file(path="hello.py", content="def hello():',
        "the call to 'write_file' is cut short",
    ),
    "json-cut-short": (
        '{"name": "write_file", "arguments": {"path": "hello.py", "content": "def',
        "nothing was run",
    ),
    "json-invented-file-name": (
        '{"name": "test_calc.py", "arguments": {"a": 2, "b": 3}}',
        "unknown tool 'test_calc.py'",
    ),
    "fenced-json-invented": (
        'I will run the greeter.\n```json\n{"name": "run_greet", "arguments": {}}\n```',
        "unknown tool 'run_greet'",
    ),
    "real-tool-in-a-plain-fence": (
        '```\n{"name": "write_file", "arguments": {"path": "hello.py", "content": "x"}}\n```',
        "was written as text, so it did not run",
    ),
}


@pytest.mark.parametrize(("text", "problem"), SHAPES.values(), ids=SHAPES.keys())
async def test_each_shape_of_a_call_in_the_text_is_a_failed_call(
    repo: Path, scripted: ScriptedModel, text: str, problem: str
) -> None:
    if text.startswith("functions."):
        # llama-cpp-python's chatml-function-calling: the stream holds only the stub, and the
        # same request without streaming answers it again.
        scripted.empty_tool_stream = text
    scripted.script = [{"content": text}, answer("Done: hello.py has hello().")]
    driven = await drive(repo, scripted)
    (entry,) = written_entries(driven.log)
    assert problem in entry["error"]
    said = told(scripted.requests[-1])
    assert said.startswith("Your answer was a tool call written as text, so no tool ran")
    assert entry["error"] in said or "no tool ran." in said  # the problem, when there is one
    assert f"You wrote: {' '.join(entry['raw_excerpt'].split())[:60]}" in said
    # The model's words after it claim what never ran: the run is not `completed`.
    assert driven.outcome.status == "incomplete", driven.outcome
    assert "written as text and never ran" in (driven.outcome.reason or "")
    assert driven.outcome.answer == "Done: hello.py has hello()."
    assert not (repo / "hello.py").exists()


async def test_a_second_call_in_text_switches_to_the_text_protocol_for_good(
    repo: Path, scripted: ScriptedModel
) -> None:
    def corrected_in_text(body: dict[str, Any]) -> None:
        assert tool_names(body) == []  # asked through the text protocol from now on
        assert "TOOLS:" in system_text(body) and '<tool name="NAME" args>' in system_text(body)
        said = told(body)
        assert "could not be read" in said and "unknown tool 'run_greet'" in said
        assert '<tool name="NAME" args>' in said

    scripted.script = [
        {"content": INVENTED},
        {"content": "I will greet first.\n" + INVENTED},
        then(corrected_in_text, {"content": tag("write_file", path="hello.py", content=HELLO)}),
        answer("hello.py is written."),
    ]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed", driven.outcome
    assert (repo / "hello.py").read_text() == HELLO
    assert [bool(tool_names(b)) for b in scripted.requests] == [True, True, False, False]
    assert len(written_entries(driven.log)) == 2
    assert [e["mode"] for e in driven.of_type("tool_calling_mode_changed")] == ["text"]
    assert driven.log["tool_calling_mode"] == "text"
    (learned,) = remembered(repo).values()
    assert learned["mode"] == "text" and "wrote its tool calls as text" in learned["reason"]

    # The next run starts in text mode: no request carries tools.
    asked = len(scripted.requests)
    scripted.script = [{"content": tag("read_file", path="hello.py")}, answer("It returns hello.")]
    again = await drive(repo, scripted)
    assert again.outcome.status == "completed", again.outcome
    assert [tool_names(b) for b in scripted.requests[asked:]] == [[], []]


async def test_a_model_that_keeps_writing_calls_as_text_ends_failed(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.fallback = {"content": INVENTED}
    driven = await drive(repo, scripted, overrides={"limits": {"max_tool_retries": 2}})
    assert driven.outcome.status == "failed", driven.outcome
    assert "wrote its tool calls as text 3 times in a row" in (driven.outcome.reason or "")
    assert "run_greet" in (driven.outcome.reason or "")
    assert driven.outcome.answer is None
    assert len(scripted.requests) == 3
    assert [bool(tool_names(b)) for b in scripted.requests] == [True, True, False]
    assert len(written_entries(driven.log)) == 3


async def test_explicit_native_is_told_every_time_and_never_switched(
    repo: Path, scripted: ScriptedModel
) -> None:
    text = "Here: " + tag("write_file", path="note.txt", content="x")
    scripted.script = [{"content": text}, {"content": text}, answer("I could not write it.")]
    driven = await drive(repo, scripted, overrides={"tool_calling": {"mode": "native"}})
    assert driven.outcome.status == "incomplete", driven.outcome
    assert driven.outcome.answer == "I could not write it."
    assert not (repo / "note.txt").exists()
    assert all(tool_names(b) for b in scripted.requests)  # an explicit mode is never overridden
    assert all("tool-calling interface" in told(b) for b in scripted.requests[1:])
    assert driven.log["tool_calling_mode"] == "native"
    assert not (repo / ".toolgate" / "state.json").exists()


async def test_text_mode_tells_an_invented_tool_with_the_syntax_it_reads(
    repo: Path, scripted: ScriptedModel
) -> None:
    def corrected(body: dict[str, Any]) -> None:
        said = told(body)
        assert "unknown tool 'run_greet'; available: " in said and "read_file" in said
        assert '<tool name="NAME" args>' in said

    scripted.script = [
        {"content": INVENTED},
        then(corrected, {"content": tag("read_file", path="README.md")}),
        answer("The title is Tiny project."),
    ]
    driven = await drive(repo, scripted, overrides={"tool_calling": {"mode": "text"}})
    assert driven.outcome.status == "completed", driven.outcome
    assert [c["name"] for c in driven.calls()] == [None, "read_file"]


ANSWERS = {
    "prose-naming-a-tool": 'I called write_file(path="hello.py") and hello() returns "hello".',
    "code-in-a-fence": "Here it is:\n```python\ndef hello():\n    return 'hello'\n```",
    "json-data": '{"name": "Ada", "age": 36}',
    "json-example-then-prose": '{"name": "run_greet", "arguments": {}}\nThat is the shape of it.',
}


@pytest.mark.parametrize("text", ANSWERS.values(), ids=ANSWERS.keys())
async def test_words_that_only_mention_calls_are_the_answer(
    repo: Path, scripted: ScriptedModel, text: str
) -> None:
    scripted.script = [{"content": text}]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed", driven.outcome
    assert driven.outcome.answer == text
    assert len(scripted.requests) == 1
    assert driven.of_type("tool_call_parse_error") == []
