"""Code review and plans, reached through the session service as every front end reaches them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.plans import PARTIAL_PLAN
from tests.support.scripted_model import ScriptedModel

from toolgate.config import load_config
from toolgate.records import ID_PREFIXES
from toolgate.session import ReviewError, SessionService


async def test_a_review_of_no_changes_asks_no_model(repo: Path) -> None:
    # Nothing listens there: a review that asked the model would fail.
    config = load_config(repo, overrides={"model": {"base_url": "http://127.0.0.1:9/v1"}})
    service = SessionService(repo, lambda: config)
    changes, review = await service.review(config, lambda notice: None)
    assert review is None and not changes.diff.strip()

    (repo / "README.md").write_text("# Tiny project, changed\n")
    with pytest.raises(ReviewError):
        await service.review(config, lambda notice: None)


async def test_a_review_uses_the_service_s_endpoint(repo: Path, scripted: ScriptedModel) -> None:
    (repo / "README.md").write_text("# Tiny project, changed\n")
    scripted.script = [{"content": json.dumps({"approved": True, "comments": []})}]
    config = load_config(repo, overrides={"model": {"base_url": scripted.base_url}})
    service = SessionService(repo, lambda: config)
    changes, review = await service.review(config, lambda notice: None, focus=["naming"])
    assert changes.files == ["README.md"]
    assert review is not None and review.approved
    (request,) = scripted.requests
    assert "naming" in json.dumps(request)


async def test_a_plan_is_made_kept_and_resolved_again_under_a_plan_id(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": json.dumps(PARTIAL_PLAN)}]
    config = load_config(repo, overrides={"model": {"base_url": scripted.base_url}})
    service = SessionService(repo, lambda: config)
    made = await service.make_plan("publish the README", lambda notice: None, config=config)
    assert made.plan_id.startswith(ID_PREFIXES["plan"] + "-")
    assert made.path == repo / ".toolgate" / "plans" / f"{made.plan_id}.json"
    again = service.resolve_plan(made.plan_id, config=config)
    assert [gap.missing_capability for gap in again.gaps] == ["docs.render"]
    assert again.to_dict() == made.resolved.to_dict()
