"""review_code: the model reviews a diff (or the working tree's changes) through code_review.

The review itself is `toolgate.code_review.review_in_workspace`: the model answers against the
review's output schema. This module turns the tool's arguments into its request, keeps a run
log of the review (`.toolgate/runs/review-….json`), and shapes the result.
"""

from __future__ import annotations

import asyncio
from typing import Any

from toolgate.agent.redact import Redactor
from toolgate.agent.runlog import RunLog
from toolgate.agent_tools.jobs import Job, JobError
from toolgate.code_review import (
    ReviewError,
    ReviewRequest,
    ReviewSetupError,
    working_tree_changes,
)
from toolgate.records import ToolResult, new_id
from toolgate.session.code_review import review_in_workspace


def _lines(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [str(item) for item in value or [] if str(item).strip()]


async def review_code(job: Job, arguments: dict[str, Any]) -> ToolResult:
    """The review: approved, comments on the lines they are about, metrics; changes nothing."""
    diff = str(arguments.get("diff") or "")
    files = _lines(arguments.get("files_changed"))
    if not diff.strip():
        try:
            changes = await working_tree_changes(job.root)
        except ReviewError as exc:
            raise JobError(str(exc)) from None
        diff, files = changes.diff, files or changes.files
        if not diff.strip():
            raise JobError("nothing to review: the working tree has no changes against HEAD")
    config = job.config
    standards = _lines(arguments.get("coding_standards"))
    request = ReviewRequest(
        diff=diff,
        files_changed=files,
        coding_standards="\n".join(standards) or str(config.review.get("coding_standards", "")),
        review_focus=_lines(arguments.get("review_focus")) or list(config.review.get("focus", [])),
    )
    run_id = new_id("review")
    shown = ", ".join(request.files_changed) or "the diff"
    runlog = RunLog(
        job.root,
        run_id,
        f"review_code: {shown}",
        config.model.name or "",
        config.model.base_url or "",
        "structured",
        Redactor(config.api_key),
        profile="reviewer",
    )
    runlog.save()
    job.call.progress(f"reviewing {shown}")
    # The embedded model is kept by the session service between calls; an endpoint at a base
    # URL is resolved (and closed) by the review itself.
    endpoint = None if config.model.base_url else await job.jobs.service.endpoint(config)
    try:
        review = await asyncio.wait_for(
            review_in_workspace(job.root, config, request, job.call.progress, endpoint=endpoint),
            job.remaining(),
        )
    except asyncio.TimeoutError:
        reason = f"review_code ran out of time ({job.settings.timeout_seconds:g}s)"
        runlog.finish("cancelled", reason, {})
        job.retry_reason = reason
        return ToolResult.fail(reason, data={"run_id": run_id})
    except ReviewError as exc:
        runlog.finish("failed", str(exc), {})
        # No endpoint is a matter of configuration: asking again would not help.
        job.retry_reason = None if isinstance(exc, ReviewSetupError) else str(exc)
        return ToolResult.fail(f"no review: {exc}", data={"run_id": run_id})
    data = {**review.to_dict(), "summary": review.summary(), "run_id": run_id}
    data["run_log"] = str(runlog.path)
    runlog.set(answer=review.summary(), review=review.to_dict())
    runlog.finish("completed", None, dict(review.metrics))
    job.call.progress(f"review: {review.summary()}")
    suggestions = [
        f"{c.path}:{c.line} [{c.severity}] {c.message}"
        + (f" — suggested: {c.suggestion}" if c.suggestion else "")
        for c in review.comments
    ]
    return ToolResult(True, data, None, suggestions)
