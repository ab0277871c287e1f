"""One JSON answer from the model: structured output where the endpoint takes it, text otherwise.

Plans and code reviews both ask the model for a single JSON object checked against a schema.
The request carries `response_format: json_schema` when the endpoint accepts it; an endpoint
that refuses it is asked again in plain text, and the object is read out of the text (the whole
answer, a fenced block, or the outermost braces).
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolgate.model.client import ModelError

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


def json_schema_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The `response_format` that asks for structured output against `schema`."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}


def refuses_structured_output(exc: ModelError) -> bool:
    """Whether an error is the endpoint turning down `response_format` (then: ask in text).

    A refusal is a 4xx about the request; the key, the rate limit, a missing model or a
    failing server are answered the same way without it, so they are not.
    """
    return (
        exc.status is not None
        and 400 <= exc.status < 500
        and exc.status not in (401, 403, 404, 429)
    )


def nesting_depth(value: Any, level: int = 0) -> int:
    """How deeply objects and arrays nest in a JSON value (a scalar is 0, `{}` is 1)."""
    if isinstance(value, dict):
        return max([nesting_depth(v, level + 1) for v in value.values()] or [level + 1])
    if isinstance(value, list):
        return max([nesting_depth(v, level + 1) for v in value] or [level + 1])
    return level
