"""An MCP server's question (elicitation) at the terminal, and by rule."""

from __future__ import annotations

import io
from pathlib import Path

from toolgate.cli.terminal import TerminalReviewer
from toolgate.review.questions import Question, Reply, ask, by_default
from toolgate.review.reviewer import AutoReviewer, DenyReviewer
from toolgate.workspace import Workspace

FORM = Question(
    "the MCP server 'tracker'",
    "File the issue?",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string", "title": "Title"},
            "priority": {"type": "string", "enum": ["low", "high"], "default": "low"},
            "count": {"type": "integer", "title": "How many", "default": 1},
            "urgent": {"type": "boolean", "default": False},
            "labels": {"type": "array", "items": {"type": "string", "enum": ["bug", "docs"]}},
        },
        "required": ["title", "priority"],
    },
)


def _terminal(root: Path, answers: str) -> TerminalReviewer:
    return TerminalReviewer(Workspace(root), out=io.StringIO(), inp=io.StringIO(answers))


async def test_each_field_is_asked_and_enter_keeps_the_default(tmp_path: Path) -> None:
    # title; priority (Enter: low); count: "two" is refused, then 3; urgent: y; labels; send.
    terminal = _terminal(tmp_path, "Crash on save\n\ntwo\n3\ny\nbug, docs\ny\n")
    reply = await ask(terminal, FORM)
    assert reply == Reply(
        "accept",
        {
            "title": "Crash on save",
            "priority": "low",
            "count": 3,
            "urgent": True,
            "labels": ["bug", "docs"],
        },
    )
    shown = terminal.out.getvalue()
    assert "the MCP server 'tracker' asks: File the issue?" in shown
    assert "priority (low / high) [low]:" in shown
    assert "labels (bug / docs) (optional):" in shown
    assert "expected" in shown  # "two" is not an integer


async def test_not_sending_or_no_usable_answer_declines(tmp_path: Path) -> None:
    terminal = _terminal(tmp_path, "A title\n\n\n\n\nn\n")
    assert await ask(terminal, FORM) == Reply("decline")
    # A required field left empty three times: declined, nothing more is asked.
    terminal = _terminal(tmp_path, "\n\n\n")
    assert await ask(terminal, FORM) == Reply("decline")
    # The input ended (nobody there): declined too.
    terminal = _terminal(tmp_path, "")
    assert await ask(terminal, FORM) == Reply("decline")


async def test_rules_answer_without_a_person(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    defaults_only = Question(
        "s", "m", {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}
    )
    assert await ask(AutoReviewer(workspace), defaults_only) == Reply("accept", {"a": "x"})
    # A required field without a default cannot be answered by rule.
    assert await ask(AutoReviewer(workspace), FORM) == Reply("decline")
    assert await ask(DenyReviewer(workspace), defaults_only) == Reply("decline")
    assert await ask(object(), defaults_only) == Reply("decline")  # no way to ask at all
    assert by_default(Question("s", "m", url="https://example.com/pay")) == Reply("decline")
