"""`review_changes` against the scripted model, over real HTTP with the real openai client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import git
from tests.support.calc_review import DIFF, REJECT
from tests.support.scripted_model import ScriptedModel

from toolgate.code_review import (
    REVIEW_CODE,
    ReviewError,
    ReviewRequest,
    review_changes,
    working_tree_changes,
)
from toolgate.code_review.changes import numbered
from toolgate.code_review.records import ReviewSetupError
from toolgate.model.client import ModelSettings
from toolgate.model.modes import ModeMemory


def _settings(scripted: ScriptedModel, model: str = "scripted-model") -> ModelSettings:
    return ModelSettings(model=model, base_url=scripted.base_url)


def _refuse_structured(answer: str) -> Any:
    """An endpoint without structured output: HTTP 400 to `response_format`, else `answer`."""

    def entry(body: dict[str, Any]) -> dict[str, Any]:
        if "response_format" in body:
            return {"status": 400, "error": "response_format is not supported by this model"}
        return {"content": answer}

    return entry


async def test_structured_output_is_asked_for_and_the_answer_read(scripted: ScriptedModel) -> None:
    scripted.script = [{"content": json.dumps(REJECT)}]
    review = await review_changes(ReviewRequest(diff=DIFF), _settings(scripted))
    assert review.approved is False
    [comment] = review.comments
    assert (comment.path, comment.line, comment.severity) == ("calc.py", 5, "error")
    assert comment.suggestion == "    return x / 2"
    assert review.metrics["risk"] == "high"
    assert review.metrics["output"] == "structured"
    assert review.metrics["llm_calls"] == 1 and review.metrics["files_reviewed"] == 1
    [request] = scripted.requests
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["title"] == "Toolgate code review"
    assert "tools" not in request
    # The model sees each line numbered as in the file after the change.
    prompt = request["messages"][1]["content"]
    assert "    5 +     return x / 0" in prompt
    assert "Files changed: calc.py" in prompt


async def test_a_model_without_structured_output_answers_in_text(
    scripted: ScriptedModel,
) -> None:
    prose = (
        "Here is my review.\n```json\n"
        + json.dumps({**REJECT, "comments": [{**REJECT["comments"][0], "severity": "critical"}]})
        + "\n```\nHope that helps."
    )
    scripted.script = [_refuse_structured(prose)] * 3
    notices: list[str] = []
    review = await review_changes(
        ReviewRequest(diff=DIFF), _settings(scripted), notice=notices.append
    )
    assert not review.approved
    assert review.comments[0].severity == "error"  # "critical" read as the schema's error
    assert review.metrics["output"] == "text"
    assert review.metrics["llm_calls"] == 3
    forms = [(r.get("response_format") or {}).get("type") for r in scripted.requests]
    assert forms == ["json_schema", "json_object", None]
    assert any("refused structured output" in n for n in notices)


async def test_a_server_that_takes_only_json_object_gets_the_schema_that_way(
    scripted: ScriptedModel,
) -> None:
    scripted.json_schema_500 = True
    scripted.script = [{"content": json.dumps(REJECT)}]
    notices: list[str] = []
    review = await review_changes(
        ReviewRequest(diff=DIFF), _settings(scripted), notice=notices.append
    )
    assert not review.approved and review.comments[0].line == 5
    assert review.metrics["output"] == "structured" and review.metrics["llm_calls"] == 2
    *refused, asked = scripted.requests  # the client tries a 500 once more before it gives up
    assert [r["response_format"]["type"] for r in refused] == ["json_schema"] * 2
    assert asked["response_format"]["type"] == "json_object"
    assert asked["response_format"]["schema"]["title"] == "Toolgate code review"
    [notice] = notices
    assert "HTTP 500" in notice and "trying json_object" in notice and "\n" not in notice


def _forms(scripted: ScriptedModel) -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in scripted.requests]


async def test_the_form_an_endpoint_took_is_where_the_next_review_starts(
    scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.json_schema_500 = True
    scripted.script = [{"content": json.dumps(REJECT)}] * 2
    memory = ModeMemory(tmp_path)
    first = await review_changes(ReviewRequest(diff=DIFF), _settings(scripted), memory=memory)
    assert first.metrics["llm_calls"] == 2
    assert memory.structured_output(scripted.base_url, "scripted-model") == "json_object"
    state = json.loads((tmp_path / ".toolgate" / "state.json").read_text())
    [learned] = state["structured_output"].values()
    assert "HTTP 500" in learned["reason"]
    scripted.requests.clear()

    notices: list[str] = []
    again = await review_changes(
        ReviewRequest(diff=DIFF), _settings(scripted), notice=notices.append, memory=memory
    )
    assert not again.approved and again.metrics["output"] == "structured"
    assert again.metrics["llm_calls"] == 1 and notices == []
    assert _forms(scripted) == ["json_object"]
    # Learned per endpoint and model: another model on the same server is asked afresh.
    assert memory.structured_output(scripted.base_url, "other-model") is None


async def test_an_endpoint_that_took_no_form_is_asked_in_plain_text_next_time(
    scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.script = [_refuse_structured(json.dumps(REJECT))] * 4
    memory = ModeMemory(tmp_path)
    await review_changes(ReviewRequest(diff=DIFF), _settings(scripted), memory=memory)
    assert _forms(scripted) == ["json_schema", "json_object", None]
    scripted.requests.clear()
    review = await review_changes(ReviewRequest(diff=DIFF), _settings(scripted), memory=memory)
    assert review.metrics["output"] == "text" and review.metrics["llm_calls"] == 1
    assert _forms(scripted) == [None]


async def test_a_remembered_form_the_endpoint_now_refuses_is_learned_again(
    scripted: ScriptedModel, tmp_path: Path
) -> None:
    memory = ModeMemory(tmp_path)
    memory.remember_structured_output(scripted.base_url, "scripted-model", "json_object", "")
    scripted.script = [_refuse_structured(json.dumps(REJECT))] * 2
    review = await review_changes(ReviewRequest(diff=DIFF), _settings(scripted), memory=memory)
    assert review.metrics["output"] == "text" and review.metrics["llm_calls"] == 2
    assert _forms(scripted) == ["json_object", None]
    assert memory.structured_output(scripted.base_url, "scripted-model") == "text"


async def test_the_form_the_endpoint_is_known_to_take_is_asked_first_and_not_learned(
    scripted: ScriptedModel, tmp_path: Path
) -> None:
    # The embedded model's endpoint says it takes json_object; its random port is not kept.
    scripted.json_schema_500 = True
    scripted.script = [{"content": json.dumps(REJECT)}]
    settings = _settings(scripted)
    settings.structured_output = "json_object"
    memory = ModeMemory(tmp_path)
    review = await review_changes(ReviewRequest(diff=DIFF), settings, memory=memory)
    assert review.metrics["llm_calls"] == 1 and _forms(scripted) == ["json_object"]
    assert not (tmp_path / ".toolgate" / "state.json").exists()


async def test_a_server_error_that_is_not_about_the_format_is_not_taken_for_a_refusal(
    scripted: ScriptedModel,
) -> None:
    scripted.script = [{"status": 500, "error": "CUDA out of memory"}] * 3
    with pytest.raises(ReviewError, match="500"):
        await review_changes(ReviewRequest(diff=DIFF), _settings(scripted))


async def test_an_unreadable_answer_gets_one_corrective_turn(scripted: ScriptedModel) -> None:
    scripted.script = [
        {"content": "Looks fine to me!"},
        {"content": json.dumps({"approved": True, "comments": []})},
    ]
    review = await review_changes(ReviewRequest(diff=DIFF), _settings(scripted))
    assert review.approved and review.comments == []
    assert review.metrics["llm_calls"] == 2
    correction = scripted.requests[1]["messages"][-1]["content"]
    assert "not a valid review" in correction and "no JSON object" in correction


async def test_a_schema_violation_is_named_and_then_given_up(scripted: ScriptedModel) -> None:
    bad = json.dumps({"approved": "maybe", "comments": []})
    scripted.script = [{"content": bad}, {"content": bad}]
    with pytest.raises(ReviewError, match="approved"):
        await review_changes(ReviewRequest(diff=DIFF), _settings(scripted))
    assert len(scripted.requests) == 2


async def test_an_answer_nesting_deeper_than_max_argument_depth_is_refused(
    scripted: ScriptedModel,
) -> None:
    deep: Any = "x"
    for _ in range(6):
        deep = {"d": deep}
    answer = json.dumps({"approved": True, "comments": [], "metrics": deep})
    scripted.script = [{"content": answer}, {"content": answer}]
    with pytest.raises(
        ReviewError, match=r"deeper than 4 levels \(tool_calling.max_argument_depth\)"
    ):
        await review_changes(ReviewRequest(diff=DIFF), _settings(scripted), max_nesting=4)
    # The same answer is a review under the default depth.
    scripted.script = [{"content": answer}]
    assert (await review_changes(ReviewRequest(diff=DIFF), _settings(scripted))).approved


async def test_a_refused_review_says_so_without_asking_again(scripted: ScriptedModel) -> None:
    scripted.script = [{"refusal": "I can't review this code."}, {"content": json.dumps(REJECT)}]
    with pytest.raises(ReviewError, match="^no review: the model refused: I can't review this"):
        await review_changes(ReviewRequest(diff=DIFF), _settings(scripted))
    assert len(scripted.requests) == 1


async def test_an_empty_diff_is_approved_without_asking(scripted: ScriptedModel) -> None:
    review = await review_changes(ReviewRequest(diff=""), _settings(scripted))
    assert review.approved and scripted.requests == []


async def test_an_endpoint_error_is_one_line(scripted: ScriptedModel) -> None:
    scripted.script = [{"status": 500, "error": "boom"}] * 2  # the client retries once
    with pytest.raises(ReviewError, match="HTTP 500"):
        await review_changes(ReviewRequest(diff=DIFF), _settings(scripted))


async def test_no_model_name_takes_the_endpoints_first(scripted: ScriptedModel) -> None:
    scripted.script = [{"content": json.dumps({"approved": True, "comments": []})}]
    await review_changes(ReviewRequest(diff=DIFF), _settings(scripted, model=""))
    assert scripted.requests[0]["model"] == "scripted-model"


def test_arguments_of_review_code_read_as_a_request() -> None:
    args = {
        "diff": DIFF,
        "files_changed": ["calc.py"],
        "coding_standards": ["PEP 8", "no bare except"],
        "review_focus": "correctness",
    }
    from toolgate.tools.registry import ToolRegistry

    registry = ToolRegistry()
    registry.add(REVIEW_CODE)
    assert registry.validate("review_code", args) is None
    assert registry.activity("review_code") is None  # latent: the model answers it
    request = ReviewRequest.from_arguments(args)
    assert request.coding_standards == "PEP 8\nno bare except"
    assert request.review_focus == ["correctness"]
    with pytest.raises(ReviewError, match="diff"):
        ReviewRequest.from_arguments({"files_changed": []})


def test_numbering_follows_the_new_side() -> None:
    shown = numbered(DIFF)
    assert "    1   def add(a, b):" in shown
    assert "      -     return a - b" in shown
    assert "    2 +     return a + b" in shown
    assert numbered("not a diff") == "not a diff"


async def test_working_tree_changes_include_new_files_and_staged_only(repo: Path) -> None:
    (repo / "README.md").write_text("# Tiny project\nMore.\n")
    (repo / "new.py").write_text("x = 1\n")
    changes = await working_tree_changes(repo)
    assert changes.files == ["README.md", "new.py"]
    assert "+More." in changes.diff and "+x = 1" in changes.diff
    assert (await working_tree_changes(repo, staged=True)).files == []
    git(repo, "add", "new.py")
    staged = await working_tree_changes(repo, staged=True)
    assert staged.files == ["new.py"]


async def test_working_tree_changes_outside_git_is_a_setup_error(tmp_path: Path) -> None:
    with pytest.raises(ReviewSetupError, match="is not in a git repository") as raised:
        await working_tree_changes(tmp_path)
    assert "\n" not in str(raised.value)  # one line, not git's usage text
