"""`review_code` inside a run: the answerer the gate calls, through `review_changes`.

The model passes the diff to review; without one, what the run changed so far is reviewed
(read from its checkpoint), and when the run changed nothing yet, the working tree against
`HEAD`. Standards and focus not given in the arguments come from the `[review]` table.
"""

from __future__ import annotations

from typing import Any

from toolgate.agent.latent import LatentContext
from toolgate.code_review.ask import review_changes
from toolgate.code_review.changes import Changes, runs_changes, working_tree_changes
from toolgate.code_review.records import ReviewError, ReviewRequest
from toolgate.model.modes import ModeMemory
from toolgate.records import ToolResult


async def answer_review(ctx: LatentContext, arguments: dict[str, Any]) -> ToolResult:
    """The review of the change named by `arguments`, as `review_code`'s result."""
    given = arguments.get("diff")
    if isinstance(given, str) and given.strip():
        changes, reviewed = Changes(given, []), "the diff given"
    else:
        try:
            changes, reviewed = await _unnamed_changes(ctx)
        except ReviewError as exc:
            return ToolResult.fail(
                f"no diff given and none to find: {exc}",
                suggestions=["Pass the unified diff to review as `diff`."],
            )
    review_table = ctx.config.review
    request = ReviewRequest.from_arguments({**arguments, "diff": changes.diff})
    request.files_changed = request.files_changed or changes.files
    if not request.coding_standards:
        request.coding_standards = str(review_table.get("coding_standards", ""))
    if not request.review_focus:
        request.review_focus = [str(f) for f in review_table.get("focus", [])]
    try:
        review = await review_changes(
            request,
            ctx.settings,
            max_nesting=ctx.config.tool_calling.max_argument_depth,
            max_calls=max(1, min(2, ctx.config.limits.max_llm_calls)),
            structured=ctx.structured,
            notice=ctx.notice,
            redact=ctx.redact,
            meter=ctx.meter,
            memory=ModeMemory(ctx.root),
        )
    except ReviewError as exc:
        return ToolResult.fail(str(exc))
    review.metrics["reviewed"] = reviewed
    return ToolResult.ok(
        review.to_dict(),
        suggestions=[f"{c.path}:{c.line} [{c.severity}] {c.message}" for c in review.comments],
    )


async def _unnamed_changes(ctx: LatentContext) -> tuple[Changes, str]:
    """What the run changed so far, else the working tree's changes (ReviewError: no git)."""
    changes = runs_changes(ctx.root, [ctx.run_id])
    if changes.diff.strip():
        return changes, "the changes this run made so far"
    return await working_tree_changes(ctx.root), "the working tree against HEAD"
