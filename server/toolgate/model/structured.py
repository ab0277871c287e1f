"""One JSON answer from the model: structured output where the endpoint takes it, text otherwise.

Plans and code reviews both ask the model for a single JSON object checked against a schema.
The request carries the schema as `response_format`, in the first of its forms the endpoint
accepts (`structured_formats`); an endpoint that refuses them all is asked again in plain text,
and the object is read out of the text (the whole answer, a fenced block, or the outermost
braces). The form an endpoint took after refusing others is remembered per endpoint and model
in `.toolgate/state.json`, so that it is refused once, not on every plan and review.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from toolgate.model.client import ModelError, ModelSettings
from toolgate.model.modes import ModeMemory

T = TypeVar("T")

PLAIN_TEXT = "text"  # no `response_format`: the object is read out of the answer's text

_FENCE = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


class NoJson(ValueError):
    """The model's answer holds no JSON object."""


def extract_json(text: str) -> Any:
    """The JSON object in a model's answer: the whole text, a fenced block, or the outer braces.

    Raises NoJson when none of them parses.
    """
    for candidate in (text.strip(), *(m.group(1) for m in _FENCE.finditer(text))):
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(text[start : end + 1])
        except ValueError:
            pass
    raise NoJson("the model's answer holds no JSON object")


def structured_formats(name: str, schema: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The `response_format`s that ask for one object matching `schema`, in the order tried.

    OpenAI's `json_schema` first; then `json_object` with the schema beside it, the form
    llama-cpp-python's server takes (it holds the model to a grammar made from the schema,
    and answers `json_schema` with HTTP 500).
    """
    return (
        {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}},
        {"type": "json_object", "schema": schema},
    )


def refuses_structured_output(exc: ModelError) -> bool:
    """Whether an error is the endpoint turning down `response_format` (then: ask otherwise).

    A refusal is a 4xx about the request; the key, the rate limit, a missing model or a
    failing server are answered the same way without it, so they are not. One 5xx is:
    llama-cpp-python's server answers a request it cannot validate with HTTP 500, naming the
    field.
    """
    if exc.status == 500:
        return "response_format" in str(exc)
    return (
        exc.status is not None
        and 400 <= exc.status < 500
        and exc.status not in (401, 403, 404, 429)
    )


async def ask_structured(
    settings: ModelSettings,
    formats: Sequence[dict[str, Any]],
    ask: Callable[[], Awaitable[tuple[T, int]]],
    notice: Callable[[str], None],
    memory: ModeMemory | None = None,
) -> tuple[T, int]:
    """`ask()` with each of `formats` set on `settings` in turn, then with none (plain text).

    Only the endpoint's refusal of a format moves on to the next; what `ask` returns is the
    answer and its number of requests, to which each refused request is added. The forms
    before the one the endpoint is known to take are skipped: `settings.structured_output`,
    else what `memory` learned, which is told the form taken after a refusal.
    """
    known = settings.structured_output
    if known is not None:
        memory = None  # the endpoint's own word is not learned over
    elif memory is not None:
        known = memory.structured_output(settings.base_url, settings.model)
    kinds = [form["type"] for form in formats]
    first = len(kinds) if known == PLAIN_TEXT else kinds.index(known) if known in kinds else 0
    refused, why = 0, ""
    for i, form in enumerate(formats[first:], first):
        settings.response_format = form
        try:
            answer, calls = await ask()
        except ModelError as exc:
            if not refuses_structured_output(exc):
                raise
            refused += 1
            then = f"trying {kinds[i + 1]}" if i + 1 < len(kinds) else "asking for plain JSON"
            why = str(exc).splitlines()[0][:200]  # a server's error may carry its traceback
            notice(f"the endpoint refused structured output as {form['type']} ({why}); {then}")
            continue
        _learn(memory, settings, form["type"], why, refused)
        return answer, refused + calls
    settings.response_format = None
    answer, calls = await ask()
    _learn(memory, settings, PLAIN_TEXT, why, refused)
    return answer, refused + calls


def _learn(
    memory: ModeMemory | None, settings: ModelSettings, form: str, why: str, refused: int
) -> None:
    """Keep the form an endpoint took after refusing others, so the next ask starts there."""
    if memory is None or not refused:
        return
    try:
        memory.remember_structured_output(settings.base_url, settings.model, form, why)
    except OSError:
        pass  # a workspace that cannot be written to only costs the next ask the refusals


def nesting_depth(value: Any, level: int = 0) -> int:
    """How deeply objects and arrays nest in a JSON value (a scalar is 0, `{}` is 1)."""
    if isinstance(value, dict):
        return max([nesting_depth(v, level + 1) for v in value.values()] or [level + 1])
    if isinstance(value, list):
        return max([nesting_depth(v, level + 1) for v in value] or [level + 1])
    return level
