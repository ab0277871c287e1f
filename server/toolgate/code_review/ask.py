"""Asking the model for a code review, answered against the review's output schema.

`review_code` is a latent tool: no code computes its answer, the model writes it. The request
carries the schema as structured output (`response_format`, in the first form the endpoint
takes: see `toolgate.model.structured`); an endpoint that refuses them is asked in plain
text, and the JSON is read out of the answer. An answer that does not read as a review (no
JSON, a schema violation, nesting deeper than `tool_calling.max_argument_depth`) gets a
corrective turn that says what was wrong.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from toolgate.code_review.changes import changed_files, numbered
from toolgate.code_review.records import (
    SEVERITIES,
    CodeReview,
    ReviewError,
    ReviewRequest,
    parse_review,
)
from toolgate.model.client import ModelError, ModelSettings, OpenAIChatModel
from toolgate.model.meter import UNMETERED, RequestMeter
from toolgate.model.modes import ModeMemory
from toolgate.model.structured import NoJson, ask_structured, extract_json, structured_formats
from toolgate.schemas import CODE_REVIEW, load_schema

PROMPT = """You review a code change. Do not change anything: answer with one JSON object only,
no prose, matching this JSON Schema:

{schema}

Set "approved" to false when any comment must be addressed before the change goes in (a bug,
a broken test, a security hole, a violated standard), true otherwise. Put each comment on the
line it is about: "path" as the diff names the file, "line" as numbered in the diff below (the
number at the start of a line is its line in the file after the change). "severity" is one of
{severities}. Give "suggestion" only when you can write the exact text that should replace
that line; otherwise null. Comment only on what the change adds or touches.
"""

_MAX_DIFF_CHARS = 200_000


def _quiet(message: str) -> None:
    """A notice nobody reads."""


def _same(text: str) -> str:
    return text


def review_messages(request: ReviewRequest) -> list[dict[str, Any]]:
    """The system and user messages of a review request."""
    system = PROMPT.format(
        schema=json.dumps(load_schema(CODE_REVIEW), indent=1),
        severities=", ".join(SEVERITIES),
    )
    files = request.files_changed or changed_files(request.diff)
    parts = []
    if files:
        parts.append("Files changed: " + ", ".join(files))
    if request.review_focus:
        parts.append("Focus on: " + ", ".join(request.review_focus))
    if request.coding_standards.strip():
        parts.append("Coding standards to hold the change to:\n" + request.coding_standards.strip())
    shown = numbered(request.diff)
    if len(shown) > _MAX_DIFF_CHARS:
        shown = shown[:_MAX_DIFF_CHARS] + "\n… (the rest of the diff is cut)\n"
    parts.append("The change, each line numbered as in the file after it:\n\n" + shown)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


async def review_changes(
    request: ReviewRequest,
    settings: ModelSettings,
    *,
    max_nesting: int = 32,
    max_calls: int = 2,
    structured: bool = True,
    notice: Callable[[str], None] = _quiet,
    redact: Callable[[str], str] = _same,
    meter: RequestMeter = UNMETERED,
    memory: ModeMemory | None = None,
) -> CodeReview:
    """Review a change with the model: the verdict and comments on the lines they are about.

    `request` holds the unified diff, the files it touches, the coding standards and the
    review's focus (`ReviewRequest.from_arguments` reads them from `review_code`'s arguments).
    `settings` says how to reach the model (`session.assembly.model_settings` builds them from
    the configuration; an empty `model` takes the endpoint's first listed one).
    `max_nesting` is `tool_calling.max_argument_depth`: an answer nesting deeper is refused.
    `max_calls` bounds the model calls per output mode (the first answer and its corrections).
    With `structured`, the request asks for structured output first; an endpoint that
    refuses it (HTTP 4xx) is asked in plain text, and `notice` is told so. `meter` counts
    each request as one of a run's (a latent answer's); its RequestRefused passes through.
    `memory` (the workspace's) keeps the form of structured output the endpoint takes.

    An empty diff is approved without asking the model. Raises ReviewError (one line) when the
    endpoint fails or no valid review came back.
    """
    started = time.monotonic()
    files = request.files_changed or changed_files(request.diff)
    if not request.diff.strip():
        return CodeReview(True, [], {"files_reviewed": 0, "comments": 0, "llm_calls": 0})
    messages = review_messages(request)
    settings = replace(settings, response_format=None)
    model = OpenAIChatModel(settings, redact=redact)
    calls = 0
    try:
        if not settings.model:
            model.model = settings.model = await _first_model(model)
        review, calls = await ask_structured(
            settings,
            structured_formats("code_review", load_schema(CODE_REVIEW)) if structured else (),
            lambda: _ask(model, messages, max_nesting, max_calls, meter),
            notice,
            memory,
        )
    except ModelError as exc:
        raise ReviewError(f"no review: {exc}") from None
    finally:
        await model.close()
    review.metrics.update(
        files_reviewed=len(files),
        comments=len(review.comments),
        **{s: sum(1 for c in review.comments if c.severity == s) for s in SEVERITIES},
        llm_calls=calls,
        output="structured" if settings.response_format is not None else "text",
        duration_seconds=round(time.monotonic() - started, 3),
    )
    return review


async def _first_model(model: OpenAIChatModel) -> str:
    try:
        served = await model.served_models()
    except Exception as exc:
        raise ReviewError(f"no model configured, and {model.base_url} lists none: {exc}") from None
    if not served:
        raise ReviewError(f"no model configured, and {model.base_url} lists none")
    return served[0]


async def _ask(
    model: OpenAIChatModel,
    messages: list[dict[str, Any]],
    max_nesting: int,
    max_calls: int,
    meter: RequestMeter,
) -> tuple[CodeReview, int]:
    """The review and the number of calls it took; a bad answer gets a corrective turn."""
    messages = list(messages)
    problem = "no answer"
    for calls in range(1, max(1, max_calls) + 1):
        n = meter.start_request()
        text = refusal = ""
        async for delta in model.stream(messages, None):
            text += delta.text
            refusal += delta.refusal
            if delta.done:
                meter.finish_request(n, delta)
        if refusal.strip():  # asking again would only be refused again
            raise ReviewError(f"no review: the model refused: {refusal.strip()}")
        try:
            return parse_review(extract_json(text), max_nesting=max_nesting), calls
        except (NoJson, ReviewError) as exc:
            problem = str(exc)
        messages += [
            {"role": "assistant", "content": text},
            {
                "role": "user",
                "content": f"That is not a valid review ({problem}). Answer with the corrected "
                "JSON object only, matching the schema.",
            },
        ]
    raise ReviewError(f"no valid review after {max(1, max_calls)} answer(s): {problem}")
