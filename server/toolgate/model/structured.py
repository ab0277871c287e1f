"""One JSON answer from the model: structured output where the endpoint takes it, text otherwise.

Plans and code reviews both ask the model for a single JSON object checked against a schema.
The request carries the schema as `response_format`, in the first of its forms the endpoint
accepts (`structured_formats`); an endpoint that refuses them all is asked again in plain text,
and the object is read out of the text (the whole answer, a fenced block, or the outermost
braces).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from toolgate.model.client import ModelError, ModelSettings

T = TypeVar("T")

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
) -> tuple[T, int]:
    """`ask()` with each of `formats` set on `settings` in turn, then with none (plain text).

    Only the endpoint's refusal of a format moves on to the next; what `ask` returns is the
    answer and its number of requests, to which each refused request is added.
    """
    refused = 0
    for i, form in enumerate(formats):
        settings.response_format = form
        try:
            answer, calls = await ask()
        except ModelError as exc:
            if not refuses_structured_output(exc):
                raise
            refused += 1
            then = (
                f"trying {formats[i + 1]['type']}"
                if i + 1 < len(formats)
                else "asking for plain JSON"
            )
            said = str(exc).splitlines()[0][:200]  # a server's error may carry its traceback
            notice(f"the endpoint refused structured output as {form['type']} ({said}); {then}")
            continue
        return answer, refused + calls
    settings.response_format = None
    answer, calls = await ask()
    return answer, refused + calls


def nesting_depth(value: Any, level: int = 0) -> int:
    """How deeply objects and arrays nest in a JSON value (a scalar is 0, `{}` is 1)."""
    if isinstance(value, dict):
        return max([nesting_depth(v, level + 1) for v in value.values()] or [level + 1])
    if isinstance(value, list):
        return max([nesting_depth(v, level + 1) for v in value] or [level + 1])
    return level
