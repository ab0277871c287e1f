"""The compact prompt: used under a small window, forced either way by the configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import ask_in_session, system_text
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.prompt import COMPACT_WINDOW, builtin_profiles
from toolgate.config import load_config
from toolgate.conversation.budget import Budget, message_bytes
from toolgate.session import SessionService
from toolgate.tools.builtins import builtin_tools
from toolgate.tools.schema import REASONING_FIELD


async def _first_request(
    repo: Path, scripted: ScriptedModel, overrides: dict[str, Any]
) -> dict[str, Any]:
    scripted.script = [{"content": "hi"}]
    service = SessionService(repo, lambda: load_config(repo))
    _, outcome = await ask_in_session(service, scripted, repo, "say hi", None, overrides)
    assert outcome.status == "completed", outcome.reason
    return scripted.requests[0]


def _fixed_tokens(body: dict[str, Any]) -> int:
    """What every request of the run carries, estimated as the budget does."""
    budget = Budget()
    tools = budget.tokens(len(json.dumps(body["tools"]))) if body.get("tools") else 0
    return tools + budget.message_tokens(message_bytes(body["messages"][0]))


def _descriptions(body: dict[str, Any]) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in body["tools"]}


def _window(tokens: int, **calling: Any) -> dict[str, Any]:
    return {"model": {"context_tokens": tokens}, "tool_calling": {"mode": "native", **calling}}


async def test_a_4k_window_gets_the_compact_prompt_at_under_half_the_fixed_tokens(
    repo: Path, scripted: ScriptedModel
) -> None:
    compact = await _first_request(repo, scripted, _window(4000))
    scripted.requests.clear()
    whole = await _first_request(repo, scripted, _window(32_768))
    tools = {tool.name: tool for tool in builtin_tools()}
    short = _descriptions(compact)
    assert {name: short[name] for name in tools} == {n: t.compact for n, t in tools.items()}
    assert {name: _descriptions(whole)[name] for name in tools} == {
        n: t.description for n, t in tools.items()
    }
    for entry in compact["tools"]:
        parameters = entry["function"]["parameters"]
        assert REASONING_FIELD not in parameters["properties"]
        assert "description" not in json.dumps(parameters)
    assert system_text(compact) == builtin_profiles()["developer"].compact + "\n"
    assert system_text(whole) == builtin_profiles()["developer"].instructions.strip() + "\n"
    assert _fixed_tokens(compact) <= min(1200, _fixed_tokens(whole) // 2)


@pytest.mark.parametrize(
    ("window", "setting", "compact"),
    [
        (COMPACT_WINDOW, None, True),
        (COMPACT_WINDOW + 1, None, False),
        (32_768, True, True),
        (4000, False, False),
    ],
)
async def test_the_window_decides_unless_the_configuration_says(
    repo: Path, scripted: ScriptedModel, window: int, setting: bool | None, compact: bool
) -> None:
    calling = {} if setting is None else {"compact_prompt": setting}
    body = await _first_request(repo, scripted, _window(window, **calling))
    read_file = next(t for t in body["tools"] if t["function"]["name"] == "read_file")
    sent = read_file["function"]["parameters"]["properties"]
    assert (REASONING_FIELD not in sent) is compact
    assert (read_file["function"]["description"] == builtin_tools()[0].compact) is compact


async def test_text_mode_in_a_small_window_lists_signatures_with_each_tool_s_first_line(
    repo: Path, scripted: ScriptedModel
) -> None:
    # Signatures, not schemas; each tool's whole first line, not its compact one: with the
    # compact lines the embedded model skipped the demo's run_tests step.
    overrides = {"model": {"context_tokens": 4000}, "tool_calling": {"mode": "text"}}
    body = await _first_request(repo, scripted, overrides)
    system = system_text(body)
    assert "TOOLS:" not in system  # no JSON schemas
    for tool in builtin_tools():
        assert f"): {tool.summary}" in system
    assert len(system.encode()) < 3000  # about 950 tokens, the whole text-mode prompt 2,400


async def test_a_call_is_checked_against_the_whole_schema_the_compact_one_leaves_out(
    repo: Path, scripted: ScriptedModel
) -> None:
    # The compact schema shows no minLength; the call is still held to it, and an argument
    # the compact prompt does not offer (`_reasoningForCall`) is still taken.
    scripted.script = [
        tool_call("edit_file", path="README.md", search="", replace="x"),
        tool_call(
            "edit_file",
            path="README.md",
            search="Tiny",
            replace="Small",
            _reasoningForCall="a better title",
        ),
        {"content": "done"},
    ]
    service = SessionService(repo, lambda: load_config(repo))
    _, outcome = await ask_in_session(service, scripted, repo, "look", None, _window(4000))
    assert outcome.status == "completed", outcome.reason
    refused = json.loads(scripted.requests[1]["messages"][-1]["content"])
    assert refused["success"] is False and "search" in refused["error"]
    edited = json.loads(scripted.requests[2]["messages"][-1]["content"])
    assert edited["success"] is True
    assert (repo / "README.md").read_text() == "# Small project\n"


def test_every_builtin_tool_keeps_a_short_line_of_its_own() -> None:
    for tool in builtin_tools():
        assert tool.compact, tool.name
        assert len(tool.compact) <= 80 and len(tool.compact) < len(tool.description), tool.name
        assert tool.compact_description == tool.compact
