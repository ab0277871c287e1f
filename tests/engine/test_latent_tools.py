"""Latent tools inside a run: `review_code` answered by a nested model request.

Every run here is assembled as the front ends do and talks to the scripted server over real
HTTP with the real openai client; the nested review request is one of the scripted answers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import answer, build, calls, drive, tool_messages, tool_names
from tests.support.calc_review import DIFF, REJECT
from tests.support.scripted_model import ScriptedModel

from toolgate.agent.latent import LatentContext
from toolgate.config import ConfigError
from toolgate.records import ToolResult
from toolgate.session.latent_tools import LATENT_TOOLS
from toolgate.tools.builtins import builtin_registry
from toolgate.tools.schema import Tool

ENABLED = {"tool_calling": {"latent_tools": ["review_code"]}}


def _review_request(answer_json: dict[str, Any], seen: list[dict[str, Any]]) -> Any:
    """The nested review request: recorded, and answered only when it asks for the schema."""

    def entry(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body)
        if "response_format" not in body or "tools" in body:
            return {"content": "this is not the review request"}
        return {"content": json.dumps(answer_json)}

    return entry


def _refusing_structured(answer_text: str, seen: list[dict[str, Any]]) -> Any:
    """An endpoint without structured output: HTTP 400 to `response_format`, else the text."""

    def entry(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body)
        if "response_format" in body:
            return {"status": 400, "error": "response_format is not supported by this model"}
        return {"content": answer_text}

    return entry


async def test_review_code_is_answered_by_a_nested_request(
    repo: Path, scripted: ScriptedModel
) -> None:
    seen: list[dict[str, Any]] = []
    scripted.script = [
        calls(("review_code", {"diff": DIFF, "review_focus": "correctness"})),
        _review_request(REJECT, seen),
        answer("The review found a division by zero."),
    ]
    driven = await drive(repo, scripted, overrides=ENABLED)
    assert driven.outcome.status == "completed"
    assert "review_code" in tool_names(scripted.requests[0])
    # The nested request carried the output schema as structured output, and no tools.
    [nested] = seen
    schema = nested["response_format"]["json_schema"]["schema"]
    assert schema["title"] == "Toolgate code review"
    assert "tools" not in nested
    prompt = nested["messages"][-1]["content"]
    assert "Focus on: correctness" in prompt and "return x / 0" in prompt
    # The review is the tool result of the next request.
    [result] = tool_messages(scripted.requests[2])
    assert result["success"] is True
    assert result["data"]["approved"] is False
    [comment] = result["data"]["comments"]
    assert (comment["path"], comment["line"], comment["severity"]) == ("calc.py", 5, "error")
    assert result["data"]["metrics"]["output"] == "structured"
    assert result["data"]["metrics"]["reviewed"] == "the diff given"
    assert result["suggestions"] == ["calc.py:5 [error] Division by zero."]
    # Recorded in the run log like any call: a read decided at once, with its result.
    [logged] = driven.calls()
    assert logged["name"] == "review_code"
    assert logged["decision"] == "auto"
    assert logged["result"]["data"]["approved"] is False
    decided = driven.of_type("tool_call_decided")
    assert [e["decision"] for e in decided] == ["auto"]


async def test_a_review_is_answered_as_text_when_structured_output_is_refused(
    repo: Path, scripted: ScriptedModel
) -> None:
    seen: list[dict[str, Any]] = []
    text = "Here is my review:\n```json\n" + json.dumps(REJECT) + "\n```"
    refusing = _refusing_structured(text, seen)
    scripted.script = [
        calls(("review_code", {"diff": DIFF})),
        refusing,
        refusing,
        refusing,
        answer(),
    ]
    driven = await drive(repo, scripted, overrides=ENABLED)
    assert driven.outcome.status == "completed"
    forms = [body.get("response_format", {}).get("type") for body in seen]
    assert forms == ["json_schema", "json_object", None]
    # The text request carries the schema in its prompt instead.
    assert "Toolgate code review" in seen[2]["messages"][0]["content"]
    [result] = tool_messages(scripted.requests[4])
    assert result["success"] is True
    assert result["data"]["metrics"]["output"] == "text"
    assert result["data"]["comments"][0]["message"] == "Division by zero."
    notices = [e["message"] for e in driven.of_type("notice")]
    assert any("refused structured output" in n for n in notices)


async def test_without_a_diff_what_the_run_changed_is_reviewed(
    repo: Path, scripted: ScriptedModel
) -> None:
    seen: list[dict[str, Any]] = []
    approve = {"approved": True, "comments": []}
    scripted.script = [
        calls(("write_file", {"path": "fresh.py", "content": "VALUE = 41 + 1\n"})),
        calls(("review_code", {})),
        _review_request(approve, seen),
        answer(),
    ]
    (repo / "untouched.txt").write_text("edited outside the run\n")
    driven = await drive(repo, scripted, overrides=ENABLED)
    assert driven.outcome.status == "completed"
    prompt = seen[0]["messages"][-1]["content"]
    assert "fresh.py" in prompt and "VALUE = 41 + 1" in prompt
    assert "untouched.txt" not in prompt  # only the run's own change
    [result] = tool_messages(scripted.requests[3])[-1:]
    assert result["data"]["approved"] is True
    assert result["data"]["metrics"]["reviewed"] == "the changes this run made so far"


async def test_a_failed_review_is_a_result_the_model_reads(
    repo: Path, scripted: ScriptedModel
) -> None:
    bad = {"content": "no JSON here at all"}
    scripted.script = [calls(("review_code", {"diff": DIFF})), bad, bad, answer()]
    driven = await drive(repo, scripted, overrides=ENABLED)
    assert driven.outcome.status == "completed"
    [result] = tool_messages(scripted.requests[3])
    assert result["success"] is False
    assert "no valid review after 2 answer(s)" in result["error"]


SECOND_OPINION = Tool(
    name="second_opinion",
    description="Ask for a second review of a diff.",
    parameters={"type": "object", "properties": {"diff": {"type": "string"}}},
    output=LATENT_TOOLS["review_code"][0].output,
)


async def _second_opinion(ctx: LatentContext, args: dict[str, Any]) -> ToolResult:
    """A latent tool answered through another one: its answer is one level deeper."""
    return await ctx.call("review_code", {"diff": args.get("diff", "")})


@pytest.mark.parametrize("max_depth", [1, 2])
async def test_a_nested_latent_call_beyond_max_depth_is_refused(
    repo: Path, scripted: ScriptedModel, max_depth: int
) -> None:
    registry = builtin_registry()
    registry.add_latent(SECOND_OPINION, _second_opinion)
    seen: list[dict[str, Any]] = []
    scripted.script = [calls(("second_opinion", {"diff": DIFF}))]
    if max_depth > 1:
        scripted.script.append(_review_request(REJECT, seen))
    scripted.script.append(answer())
    overrides = {"tool_calling": {"latent_tools": ["review_code"], "max_depth": max_depth}}
    driven = await drive(repo, scripted, overrides=overrides, registry=registry)
    assert driven.outcome.status == "completed"
    [result] = tool_messages(scripted.requests[-1])
    if max_depth == 1:
        assert result["success"] is False
        assert "2 levels deep" in result["error"]
        assert "tool_calling.max_depth is 1" in result["error"]
        assert len(scripted.requests) == 2  # no nested request was made
    else:
        # Level 2 is within the limit, whatever the answer's own JSON nesting (3 levels).
        assert result["success"] is True, result["error"]
        assert result["data"]["approved"] is False
        assert len(seen) == 1
    [logged] = driven.calls()
    assert logged["result"]["success"] is (max_depth > 1)


async def test_max_depth_1_answers_a_review_but_not_a_latent_call_from_inside_one(
    repo: Path, scripted: ScriptedModel
) -> None:
    """The depth counts latent answers, not JSON levels: a review (3 levels of JSON) is level 1."""
    registry = builtin_registry()
    registry.add_latent(SECOND_OPINION, _second_opinion)
    seen: list[dict[str, Any]] = []
    scripted.script = [
        calls(("review_code", {"diff": DIFF})),
        _review_request(REJECT, seen),
        calls(("second_opinion", {"diff": DIFF})),
        answer(),
    ]
    overrides = {"tool_calling": {"latent_tools": ["review_code"], "max_depth": 1}}
    driven = await drive(repo, scripted, overrides=overrides, registry=registry)
    assert driven.outcome.status == "completed"
    [review, second] = tool_messages(scripted.requests[-1])
    assert review["success"] is True, review["error"]
    assert review["data"]["comments"][0]["message"] == "Division by zero."
    assert second["success"] is False
    assert second["error"].startswith("review_code is refused: it would be a latent answer 2")
    assert "tool_calling.max_depth is 1" in second["error"]
    assert len(seen) == 1  # the review's own request; none for the refused one


def _nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"d": value}
    return value


@pytest.mark.parametrize("max_argument_depth", [4, 32])
async def test_arguments_nested_deeper_than_max_argument_depth_are_refused(
    repo: Path, scripted: ScriptedModel, max_argument_depth: int
) -> None:
    registry = builtin_registry()
    registry.add_latent(SECOND_OPINION, _second_opinion)  # its arguments take any extra keys
    seen: list[dict[str, Any]] = []
    arguments = {"diff": DIFF, "context": _nested(6)}  # 7 levels with the arguments' own
    scripted.script = [calls(("second_opinion", arguments))]
    if max_argument_depth > 7:
        scripted.script.append(_review_request(REJECT, seen))
    scripted.script.append(answer())
    calling = {"latent_tools": ["review_code"], "max_argument_depth": max_argument_depth}
    driven = await drive(repo, scripted, overrides={"tool_calling": calling}, registry=registry)
    assert driven.outcome.status == "completed"
    [result] = tool_messages(scripted.requests[-1])
    [logged] = driven.calls()
    if max_argument_depth == 4:
        assert result["success"] is False
        assert result["error"] == (
            "second_opinion is refused: its arguments nest deeper than "
            "tool_calling.max_argument_depth (4 levels)"
        )
        assert logged["decision"] == "denied"
        [executed] = driven.of_type("tool_call_executed")
        assert executed["rule"] == "tool_calling.max_argument_depth"
        assert len(scripted.requests) == 2  # nothing was asked for it
    else:
        assert result["success"] is True, result["error"]
        assert logged["decision"] == "auto"
        assert len(seen) == 1


async def test_review_code_is_offered_only_when_enabled(
    repo: Path, scripted: ScriptedModel
) -> None:
    run, _ = await build(repo, scripted)
    assert "review_code" not in run.registry
    await run.model.close()
    run, _ = await build(repo, scripted, overrides=ENABLED)
    assert run.registry.answerer("review_code") is not None
    assert run.registry.activity("review_code") is None  # still latent: no code behind it
    await run.model.close()
    # A profile that lists it offers it without the key.
    profiles = repo / ".agent" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "checker.md").write_text("---\ntools: read_file, review_code\n---\nCheck.\n")
    run, _ = await build(repo, scripted, overrides={"profile": "checker"})
    assert sorted(run.registry.names()) == ["read_file", "review_code"]
    await run.model.close()
    with pytest.raises(ConfigError, match="unknown latent tool 'review_kode'"):
        await build(repo, scripted, overrides={"tool_calling": {"latent_tools": ["review_kode"]}})


async def test_a_denied_latent_tool_asks_no_model(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [calls(("review_code", {"diff": DIFF})), answer()]
    overrides = {**ENABLED, "policy": {"deny_tools": ["review_code"]}}
    driven = await drive(repo, scripted, overrides=overrides)
    [result] = tool_messages(scripted.requests[1])
    assert result["success"] is False
    assert "policy.deny_tools lists review_code" in result["error"]
    assert len(scripted.requests) == 2
    assert driven.calls()[0]["decision"] == "denied"


async def test_a_text_protocol_run_gets_its_review_in_a_result_block(
    repo: Path, scripted: ScriptedModel
) -> None:
    """A model without native tools or structured output: every part of it goes through text."""
    seen: list[dict[str, Any]] = []
    call = f'<tool name="review_code" args>{json.dumps({"diff": DIFF})}</tool>'
    text = json.dumps(REJECT)
    refusing = _refusing_structured(text, seen)
    scripted.script = [
        {"content": "Let me review it.\n" + call},
        *[refusing] * 3,
        answer(),
    ]
    overrides = {"tool_calling": {"latent_tools": ["review_code"], "mode": "text"}}
    driven = await drive(repo, scripted, overrides=overrides)
    assert driven.outcome.status == "completed"
    assert "tools" not in scripted.requests[0]
    assert "review_code" in scripted.requests[0]["messages"][0]["content"]
    last = scripted.requests[-1]["messages"][-1]["content"]
    match = re.search(
        r'<tool_result name="review_code" success="true">(.*?)</tool_result>', last, re.S
    )
    assert match is not None, last
    assert '"Division by zero."' in match.group(1)
    assert '"output": "text"' in match.group(1)


async def test_a_latent_review_counts_toward_max_llm_calls(
    repo: Path, scripted: ScriptedModel
) -> None:
    """The first review takes request 2 of 3; the second would need a fourth, and is refused."""
    seen: list[dict[str, Any]] = []
    scripted.script = [
        calls(("review_code", {"diff": DIFF})),
        _review_request(REJECT, seen),
        calls(("review_code", {"diff": DIFF, "review_focus": "tests"})),
        _review_request(REJECT, seen),  # never asked for
        answer(),
    ]
    overrides = {**ENABLED, "limits": {"max_llm_calls": 3}}
    driven = await drive(repo, scripted, overrides=overrides)
    # The run's own turns are 1 and 3, the nested review 2: the second review is refused,
    # and the run stops where its next turn would pass the limit.
    assert len(scripted.requests) == 3
    assert len(seen) == 1
    assert driven.outcome.status == "limit_reached"
    assert driven.outcome.reason == "reached max_llm_calls (3)"
    first, second = driven.calls()
    assert first["result"]["success"] is True
    assert second["result"]["success"] is False
    assert second["result"]["error"] == (
        "review_code is refused: its answer needs a model request, and the run has made all "
        "3 model requests limits.max_llm_calls allows"
    )
    counted = driven.of_type("llm_call")
    assert [(e["n"], e["mode"]) for e in counted] == [(1, "native"), (2, "latent"), (3, "native")]
    assert driven.log["metrics"]["llm_calls_total"] == 3


async def test_a_latent_review_refused_mid_answer_is_a_result(
    repo: Path, scripted: ScriptedModel
) -> None:
    """A review whose correction would pass the limit stops there, as a refusal, not a crash."""
    scripted.script = [
        calls(("review_code", {"diff": DIFF})),
        {"content": "no JSON here at all"},  # the review's first answer, to be corrected
        answer(),
    ]
    overrides = {**ENABLED, "limits": {"max_llm_calls": 2}}
    driven = await drive(repo, scripted, overrides=overrides)
    assert len(scripted.requests) == 2  # no correction was asked for
    assert driven.outcome.status == "limit_reached"
    [logged] = driven.calls()
    assert logged["result"]["success"] is False
    assert "limits.max_llm_calls" in logged["result"]["error"]
    assert logged["result"]["error"].startswith("review_code is refused: its answer needs")


def _with_usage(entry: Any, total: int) -> Any:
    """A script entry (or entry function) whose answer reports `total` tokens, a tenth of
    them completion."""
    usage = {"prompt_tokens": total - total // 10, "completion_tokens": total // 10}
    usage["total_tokens"] = total
    if callable(entry):
        return lambda body: {**entry(body), "usage": usage}
    return {**entry, "usage": usage}


@pytest.mark.parametrize("mode", ["native", "text"])
async def test_a_latent_reviews_tokens_are_in_the_runs_totals(
    repo: Path, scripted: ScriptedModel, mode: str
) -> None:
    seen: list[dict[str, Any]] = []
    if mode == "native":
        first = calls(("review_code", {"diff": DIFF}))
        review = _review_request(REJECT, seen)
    else:
        # In text mode the review starts as soon as its block closes, while turn 1 streams on.
        block = f'<tool name="review_code" args>{json.dumps({"diff": DIFF})}</tool>'
        first = {"content": block + "\nWaiting for the review." * 20}
        review = _refusing_structured(json.dumps(REJECT), seen)
    scripted.script = [
        _with_usage(first, 110),
        _with_usage(review, 960),
        *([_with_usage(review, 965), _with_usage(review, 970)] if mode == "text" else []),
        _with_usage(answer("Reviewed."), 300),
    ]
    overrides = {"tool_calling": {"latent_tools": ["review_code"], "mode": mode}}
    driven = await drive(repo, scripted, overrides=overrides)
    assert driven.outcome.status == "completed"
    # Each request's usage under its own number, whichever finished first.
    used = sorted((e["n"], e.get("mode"), e["total_tokens"]) for e in driven.of_type("llm_usage"))
    if mode == "native":
        # (the refused structured requests of text mode report nothing: they got HTTP 400)
        assert used == [(1, None, 110), (2, "latent", 960), (3, None, 300)]
        assert driven.log["account"]["tokens"] == {"prompt": 1233, "completion": 137, "total": 1370}
    else:
        assert used == [(1, None, 110), (4, "latent", 970), (5, None, 300)]
        assert driven.log["account"]["tokens"] == {"prompt": 1242, "completion": 138, "total": 1380}
    # Each step keeps its own request's usage; the review's counts for the run, not the step.
    assert [s.get("usage", {}).get("total_tokens") for s in driven.log["steps"]] == [110, 300]
