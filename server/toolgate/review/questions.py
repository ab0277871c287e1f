"""Questions a tool's server puts to the person (MCP elicitation), and their answers.

A front end's reviewer answers them when it can ask its person (`answer`); a reviewer that
decides by rule accepts the form's defaults (`--approve auto`) or declines (`--approve deny`,
or nobody to ask). A reviewer without `answer` declines: a question never waits for nobody.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Question:
    """What a server asks: a message, and a flat form of primitive fields (or a URL to visit)."""

    asker: str  # who asks, as the person reads it: "the MCP server 'tracker'"
    message: str
    schema: dict[str, Any] = field(default_factory=dict)
    url: str | None = None  # a page to open instead of a form (sign-ins, payments)

    def fields(self) -> dict[str, dict[str, Any]]:
        """The form's fields by name (each a JSON Schema of a string, number, boolean, enum)."""
        properties = self.schema.get("properties")
        return dict(properties) if isinstance(properties, dict) else {}

    def required(self) -> set[str]:
        """The fields the form cannot be sent without."""
        required = self.schema.get("required")
        return {str(r) for r in required} if isinstance(required, list) else set()


@dataclass(frozen=True)
class Reply:
    """The person's answer: accept (with the form's values), decline, or cancel."""

    action: Action
    content: dict[str, Any] | None = None


def defaults(question: Question) -> dict[str, Any] | None:
    """The form filled with its defaults; None when a required field has no default."""
    values = {
        name: schema["default"]
        for name, schema in question.fields().items()
        if isinstance(schema, dict) and "default" in schema
    }
    if question.required() - set(values):
        return None
    return values


def by_default(question: Question) -> Reply:
    """`--approve auto`'s answer: the defaults when they fill the form, else decline."""
    if question.url is not None:
        return Reply("decline")  # a page only a person can visit
    values = defaults(question)
    return Reply("decline") if values is None else Reply("accept", values)


async def ask(reviewer: object, question: Question) -> Reply:
    """The reviewer's answer to a question, or decline when it has no way to ask."""
    answer = getattr(reviewer, "answer", None)
    if answer is None:
        return Reply("decline")
    reply = await answer(question)
    assert isinstance(reply, Reply)
    return reply


def choices(schema: dict[str, Any]) -> list[Any]:
    """The values a field allows (an enum, titled `oneOf` / `anyOf` constants), if listed."""
    items = schema.get("items") if schema.get("type") == "array" else None
    source = items if isinstance(items, dict) else schema
    if isinstance(source.get("enum"), list):
        return list(source["enum"])
    for key in ("oneOf", "anyOf"):
        options = source.get(key)
        if isinstance(options, list):
            return [o["const"] for o in options if isinstance(o, dict) and "const" in o]
    return []


def read_value(schema: dict[str, Any], text: str) -> Any:
    """A typed answer read from what the person typed; ValueError says what was expected."""
    kind = schema.get("type", "string")
    allowed = choices(schema)
    if kind == "boolean":
        low = text.strip().lower()
        if low in ("y", "yes", "true", "1"):
            return True
        if low in ("n", "no", "false", "0"):
            return False
        raise ValueError("yes or no")
    if kind == "integer":
        return int(text.strip())
    if kind == "number":
        return float(text.strip())
    if kind == "array":
        values = [part.strip() for part in text.split(",") if part.strip()]
        wrong = [v for v in values if allowed and v not in allowed]
        if wrong:
            raise ValueError("some of " + ", ".join(map(str, allowed)))
        return values
    if allowed and text not in allowed:
        raise ValueError("one of " + ", ".join(map(str, allowed)))
    return text
