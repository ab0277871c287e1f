"""Bugs in tools or front ends end a call or a run, never the host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.engine.helpers import answer, drive, results_read
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.records import ToolResult
from toolgate.review.proposal import Proposal, Resolution
from toolgate.review.reviewer import DiskReviewer
from toolgate.tools.builtins import builtin_registry
from toolgate.tools.schema import Tool


class Broken:
    """An activity with a bug."""

    async def run(self, ctx: Any, args: dict[str, Any]) -> ToolResult:
        raise KeyError("missing-setting")


class ExplodingReviewer(DiskReviewer):
    """A front end whose reviewer has a bug."""

    async def review_change(self, proposal: Proposal) -> Resolution:
        raise RuntimeError("the review panel fell over")


async def test_a_tool_that_raises_is_a_result_the_model_reads(
    repo: Path, scripted: ScriptedModel
) -> None:
    registry = builtin_registry()
    registry.add(Tool(name="broken", description="A tool with a bug."), Broken())
    scripted.script = [tool_call("broken"), answer("I could not use it.")]
    driven = await drive(repo, scripted, registry=registry)
    assert driven.outcome.status == "completed"
    result = results_read(scripted)[0]
    assert result["success"] is False
    assert result["error"] == "broken failed inside Toolgate: KeyError: 'missing-setting'"


async def test_a_crash_outside_the_tools_fails_the_run_with_the_reason(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [tool_call("write_file", path="a.txt", content="x\n"), answer()]
    driven = await drive(repo, scripted, reviewer=ExplodingReviewer)
    assert driven.outcome.status == "failed"
    assert driven.outcome.reason == "internal error: RuntimeError: the review panel fell over"
    assert driven.log["status"] == "failed"
    assert not (repo / "a.txt").exists()
