"""What a finished tool call shows in the editor: a text excerpt of its result, and where it points.

The model reads the whole result; the person reads a card in the chat. So a read shows the
start of the text it read, a listing or a search its first entries, `run_tests` its summary
and each failure as `file:line: message` (with the failures as the call's locations, so the
editor can jump to them), and anything else a one-line account of what it returned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import ToolCallLocation

from toolgate.records import ToolResult

EXCERPT_LINES = 40
EXCERPT_CHARS = 4000
LISTED = 30  # entries of a listing or a search shown
FAILURES_SHOWN = 20


@dataclass
class Shown:
    """A result as the editor shows it."""

    text: str
    locations: list[ToolCallLocation] | None = None


def excerpt(text: str, lines: int = EXCERPT_LINES, chars: int = EXCERPT_CHARS) -> str:
    """The first lines of a text, with a note of how much was left out."""
    kept = text.splitlines()[:lines]
    out = "\n".join(kept)[:chars]
    total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if len(out) < len(text.rstrip("\n")):
        out += f"\n… ({total} lines in all)"
    return out


def summary_of_tests(data: dict[str, Any]) -> str:
    """The test summary line and each failure as `file:line: test — message`."""
    summary = data.get("summary") or {}
    failures = [f for f in data.get("failures") or [] if isinstance(f, dict)]
    lines = [
        f"tests: {summary.get('passed', 0)} passed, {summary.get('failed', 0)} failed, "
        f"{summary.get('errors', 0)} errors ({len(failures)} failures)"
    ]
    if data.get("timed_out"):
        lines.append("the test run timed out")
    for failure in failures[:FAILURES_SHOWN]:
        message = " ".join(str(failure.get("message") or "").split())[:300]
        lines.append(
            f"{failure.get('file')}:{failure.get('line')}: {failure.get('test_id')} — {message}"
        )
    if len(failures) > FAILURES_SHOWN:
        lines.append(f"… and {len(failures) - FAILURES_SHOWN} more")
    return "\n".join(lines)


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


def _listing(data: dict[str, Any]) -> str | None:
    for key in ("entries", "matches", "files"):
        items = data.get(key)
        if not isinstance(items, list):
            continue
        shown = [_entry(item) for item in items[:LISTED]]
        more = f"\n… {len(items) - LISTED} more" if len(items) > LISTED else ""
        return f"{len(items)} {key}\n" + "\n".join(shown) + more
    return None


def _entry(item: Any) -> str:
    if isinstance(item, dict):
        path = item.get("path") or item.get("name") or ""
        line = item.get("line")
        text = " ".join(str(item.get("text") or "").split())[:200]
        where = f"{path}:{line}" if line is not None else str(path)
        return f"{where}: {text}" if text else where + ("/" if item.get("type") == "dir" else "")
    return str(item)


def _git_status(data: dict[str, Any]) -> str:
    if data.get("clean"):
        return f"on {data.get('branch') or '(no branch)'}: clean"
    parts = [f"on {data.get('branch') or '(no branch)'}"]
    for key in ("staged", "unstaged"):
        for item in data.get(key) or []:
            parts.append(f"{key} {item.get('status')} {item.get('path')}")
    parts.extend(f"untracked {path}" for path in data.get("untracked") or [])
    return "\n".join(parts[: LISTED + 1])


def shown(result: ToolResult, root: Path) -> Shown | None:
    """The text (and locations) a successful call shows, or None when there is nothing to say.

    Told by what the result holds, whichever tool gave it: a test run's summary and failures,
    a file's content, git's branch and states.
    """
    data = result.data
    if not result.success:
        return None  # the error goes out with the failed status
    if isinstance(data, dict):
        if isinstance(data.get("summary"), dict) and isinstance(data.get("failures"), list):
            return Shown(summary_of_tests(data), _failure_locations(root, data))
        if isinstance(data.get("content"), str):
            return Shown(excerpt(data["content"]))
        if "branch" in data and "clean" in data:
            return Shown(_git_status(data))
        listing = _listing(data)
        if listing is not None:
            return Shown(listing)
        for key in ("message", "summary", "output", "stdout"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                # A change's note names what the editor reports after it (new problems, a file
                # left unsaved): the person reads what the model reads.
                note = data.get("note")
                said = f"{value}\n{note}" if isinstance(note, str) and note else value
                return Shown(excerpt(said))
    if isinstance(data, str) and data.strip():
        return Shown(excerpt(data))
    if data is None:
        return None
    text = json.dumps(data, ensure_ascii=False, default=str)
    return Shown(excerpt(text, chars=1000))
