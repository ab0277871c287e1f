"""A server's `elicitation/create`, put to the person through the run's front end.

The run's reviewer answers (`toolgate.review.questions`): the terminal asks field by field, a
reviewer that decides by rule accepts the form's defaults (`--approve auto`) or declines
(`deny`, or nobody to ask). Whatever happens — no way to ask, a failure while asking — the
server gets an answer: decline, never silence.
"""

from __future__ import annotations

import logging
from typing import Any

from toolgate.review.questions import Question, ask

log = logging.getLogger(__name__)


def question(server: str, params: Any) -> Question:
    """The request's params as a question from the named server."""
    asker = f"the MCP server {server!r}"
    if getattr(params, "mode", "form") == "url":
        return Question(asker, str(params.message), url=str(params.url))
    schema = getattr(params, "requested_schema", None) or {}
    return Question(asker, str(params.message), dict(schema))


def callback(server: str, person: object) -> Any:
    """The SDK client's `elicitation_callback` for one server's session."""

    async def answer(context: Any, params: Any) -> Any:
        import mcp_types as types

        try:
            reply = await ask(person, question(server, params))
        except Exception as exc:  # the person's side failed: the server is told no
            log.warning("could not ask about %s's question: %s", server, exc)
            return types.ElicitResult(action="decline")
        if reply.action != "accept":
            return types.ElicitResult(action=reply.action)
        return types.ElicitResult(action="accept", content=dict(reply.content or {}))

    return answer
