"""Engine events and records → ACP `session/update` payloads (tool kinds, titles, locations)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from acp import helpers
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    StopReason,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
)

from toolgate.tools.schema import ACP_KINDS, Tool

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
"""What a tool call may show: text, or a file's diff."""

_ACP_TOOL_KINDS: tuple[str, ...] = get_args(ToolKind)


def tool_kind(tool: Tool | None) -> ToolKind:
    """The kind ACP draws a tool with, as the tool says; "other" for one the run does not know."""
    return _known(tool.acp if tool is not None else "other")


def kind_of(kind: str) -> ToolKind:
    """The kind ACP draws a call of this engine kind (read, change, run, git, other) with."""
    return _known(ACP_KINDS.get(kind, "other"))


def _known(kind: str) -> ToolKind:
    # the tool's word is checked against ACP's list: a client refuses a kind it does not know
    return kind if kind in _ACP_TOOL_KINDS else "other"  # type: ignore[return-value]  # checked


def title_of(name: str, arguments: dict[str, Any]) -> str:
    """A one-line title: the tool and what it acts on."""
    target = arguments.get("path") or arguments.get("command") or arguments.get("pattern")
    return f"{name} {target}" if isinstance(target, str) and target else name


def locations_of(root: Path, arguments: dict[str, Any]) -> list[ToolCallLocation] | None:
    """The file (and line, when given) a call acts on, as an absolute path."""
    path = arguments.get("path")
    if not isinstance(path, str) or not path or path.startswith(("/", "~")) or ".." in path:
        return None  # the sandbox refuses these; never name a path outside the root
    line = arguments.get("line") or arguments.get("start_line")
    return [
        ToolCallLocation(
            path=str(root / path), line=line if isinstance(line, int) and line >= 0 else None
        )
    ]


def started(
    root: Path, call_id: str, name: str, arguments: dict[str, Any], tool: Tool | None
) -> ToolCallStart:
    """The `tool_call` update for a call the model proposed (`tool`: its facts, if known)."""
    return helpers.start_tool_call(
        call_id,
        title_of(name, arguments),
        kind=tool_kind(tool),
        status="pending",
        locations=locations_of(root, arguments),
        raw_input=arguments,
    )


def text_content(text: str) -> ContentToolCallContent:
    """Plain text shown inside a tool call."""
    return helpers.tool_content(helpers.text_block(text))


def diff_content(root: Path, path: str, old: str | None, new: str) -> FileEditToolCallContent:
    """A file change as ACP's diff content (absolute path, old and new text)."""
    return helpers.tool_diff_content(str(root / path), new, old)


def progress(
    call_id: str,
    status: str,
    content: Sequence[ToolContent] | None = None,
    locations: Sequence[ToolCallLocation] | None = None,
) -> ToolCallProgress:
    """A `tool_call_update` with a status and, when there are some, content and locations."""
    return helpers.update_tool_call(call_id, status=status, content=content, locations=locations)  # type: ignore[arg-type]  # plain dicts


def replayed_status(stored: Any) -> str:
    """A stored call's ACP status when a session is replayed: how it ended live.

    Live, a call ends `completed` only when its result succeeded. The transcript keeps `ok`
    for that, and `failed`, `denied` (refused before anybody was asked) or `rejected` (by the
    person, or by a rule for them) otherwise; a call kept with no status replays as before.
    """
    return "completed" if stored in ("ok", None) else "failed"


STOP_REASONS: dict[str, StopReason] = {
    "completed": "end_turn",
    "incomplete": "end_turn",  # a change refused or failed: the turn ended, nothing more to do
    "cancelled": "cancelled",
    "limit_reached": "max_turn_requests",  # max_steps, max_llm_calls, max_run_seconds
    "blocked_by_policy": "refusal",  # the model kept asking for what the policy denies
    "failed": "end_turn",
}
"""A run's status → the prompt's stopReason (a failed run says why in a message first)."""


def stop_reason(status: str, finish_reason: str | None, refused: bool = False) -> StopReason:
    """The prompt's stopReason from the run's status and the model's last answer.

    An answer the endpoint cut at its token limit (`length`) ends `max_tokens`; one its
    content filter stopped (`content_filter`) ends `refusal`, even when nothing was left of it,
    and so does the model's own refusal (`refused`: OpenAI's `refusal` field, whatever the
    finish reason).
    """
    if (refused or finish_reason == "content_filter") and status != "cancelled":
        return "refusal"
    if finish_reason == "length" and status in ("completed", "incomplete"):
        return "max_tokens"
    return STOP_REASONS.get(status, "end_turn")
