"""A finished tool call as a short text a person reads: an excerpt of what it gave back.

The model reads the whole result; the person reads a line or a card in the editor. So a read
shows the start of the text it read, a listing or a search its first entries, a test run its
summary and each failure as `file:line: message`, git's status its branch and files, and
anything else a short account of what it returned. Every front end that shows results (ACP's
tool-call content, the language server's `tool_result` events) draws from here.
"""

from __future__ import annotations

import json
from typing import Any

from toolgate.records import ToolResult

EXCERPT_LINES = 40
EXCERPT_CHARS = 4000
LISTED = 30  # entries of a listing or a search shown
FAILURES_SHOWN = 20


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


def result_text(result: ToolResult) -> str | None:
    """The text a successful call shows, or None when there is nothing to say.

    Told by what the result holds, whichever tool gave it: a test run's summary and failures,
    a file's content, git's branch and states.
    """
    data = result.data
    if not result.success:
        return None  # the error goes out with the failed status
    if isinstance(data, dict):
        if isinstance(data.get("summary"), dict) and isinstance(data.get("failures"), list):
            return summary_of_tests(data)
        if isinstance(data.get("content"), str):
            return excerpt(data["content"])
        if "branch" in data and "clean" in data:
            return _git_status(data)
        listing = _listing(data)
        if listing is not None:
            return listing
        for key in ("message", "summary", "output", "stdout"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                # A change's note names what the editor reports after it (new problems, a file
                # left unsaved): the person reads what the model reads.
                note = data.get("note")
                return excerpt(f"{value}\n{note}" if isinstance(note, str) and note else value)
    if isinstance(data, str) and data.strip():
        return excerpt(data)
    if data is None:
        return None
    return excerpt(json.dumps(data, ensure_ascii=False, default=str), chars=1000)
