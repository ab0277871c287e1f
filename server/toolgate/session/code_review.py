"""Reviewing a workspace's changes with its configured endpoint (`SessionService.review` calls it).

It resolves the endpoint from the configuration as a run does (trust checked, the embedded
model started when no base URL is set) and hands the request to `review_changes`. A front
end takes from here the records of a review: the `Changes` it asks about, the `CodeReview`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolgate.agent.redact import Redactor
from toolgate.code_review.ask import review_changes
from toolgate.code_review.changes import Changes as Changes
from toolgate.code_review.records import CodeReview as CodeReview
from toolgate.code_review.records import ReviewRequest, ReviewSetupError
from toolgate.config import Config
from toolgate.model.modes import ModeMemory
from toolgate.session.assembly import (
    Endpoint,
    SetupError,
    check_trust,
    model_settings,
    resolve_endpoint,
)


def review_request(
    config: Config, changes: Changes, focus: list[str] | None = None
) -> ReviewRequest:
    """A request for `changes`, held to the configured standards (`[review]`) and focus."""
    return ReviewRequest(
        diff=changes.diff,
        files_changed=list(changes.files),
        coding_standards=str(config.review.get("coding_standards", "")),
        review_focus=list(focus or config.review.get("focus", [])),
    )


async def review_in_workspace(
    root: Path,
    config: Config,
    request: ReviewRequest,
    notice: Callable[[str], None],
    *,
    structured: bool = True,
    endpoint: Endpoint | None = None,
) -> CodeReview:
    """The model's review of `request` with the workspace's configured endpoint and limits.

    `endpoint`, when given, is used and left open (a session service's kept embedded model);
    otherwise one is resolved from `config` and closed after the review.
    Raises ReviewSetupError (one line) when the endpoint cannot be set up, and ReviewError
    when it fails or gives no valid review.
    """
    owned = endpoint is None
    try:
        for line in check_trust(root, config):
            notice(line)
        if endpoint is None:
            endpoint = await resolve_endpoint(config, notice)
    except SetupError as exc:
        raise ReviewSetupError(str(exc)) from None
    try:
        return await review_changes(
            request,
            model_settings(config, endpoint),
            max_nesting=config.tool_calling.max_argument_depth,
            max_calls=max(1, min(2, config.limits.max_llm_calls)),
            structured=structured,
            notice=notice,
            redact=Redactor(config.api_key).text,
            memory=ModeMemory(root),
        )
    finally:
        if owned and endpoint.close is not None:
            await endpoint.close()
