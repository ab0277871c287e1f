"""What a finished tool call shows in ACP: the text excerpt of its result, and where it points.

The excerpt is the one every front end shows (`toolgate.session.result_text`); ACP adds the
failures of a test run as the call's locations, so the editor can jump to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import ToolCallLocation

from toolgate.records import ToolResult
from toolgate.session.result_text import (
    FAILURES_SHOWN,
    excerpt,
    result_text,
    summary_of_tests,
)

__all__ = ["Shown", "excerpt", "shown", "summary_of_tests"]


@dataclass
class Shown:
    """A result as the editor shows it."""

    text: str
    locations: list[ToolCallLocation] | None = None


def _failure_locations(root: Path, data: dict[str, Any]) -> list[ToolCallLocation] | None:
    found = []
    for failure in (data.get("failures") or [])[:FAILURES_SHOWN]:
        path, line = failure.get("file"), failure.get("line")
        if not isinstance(path, str) or not path or path.startswith("/") or ".." in path:
            continue  # only files inside the workspace are named to the editor
        found.append(
            ToolCallLocation(path=str(root / path), line=line if isinstance(line, int) else None)
        )
    return found or None


def shown(result: ToolResult, root: Path) -> Shown | None:
    """The text (and locations) a successful call shows, or None when there is nothing to say."""
    text = result_text(result)
    if text is None:
        return None
    data = result.data
    is_test_run = (
        isinstance(data, dict)
        and isinstance(data.get("summary"), dict)
        and isinstance(data.get("failures"), list)
    )
    return Shown(text, _failure_locations(root, data) if is_test_run else None)
