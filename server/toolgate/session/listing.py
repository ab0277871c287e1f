"""The session list: each session's entry, read from the records that say it."""

from __future__ import annotations

import json
from pathlib import Path

from toolgate.conversation.history import title_of
from toolgate.conversation.rewind import read_rewinds
from toolgate.conversation.store import SessionInfo


def clean_title(title: str) -> str:
    """One line of at most 200 characters."""
    return " ".join(title.split())[:200]


def scan(path: Path, session_id: str) -> SessionInfo | None:
    """A session's list entry, reading only the records that say it (not every message)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    lines = data.split(b"\n")
    try:
        header = json.loads(lines[0])
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("format") is None:
        return None
    title = str(header.get("title") or "")
    created = str(header.get("created") or "")
    last = created
    turns = 0
    rewinds = []
    for raw in lines[1:]:
        # Records are written with "t" first, so the kind is known without parsing the line.
        if raw.startswith((b'{"t":"turn"', b'{"t":"end"', b'{"t":"title"', b'{"t":"rewind')):
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if str(record.get("t")).startswith("rewind"):
                rewinds.append(record)
                continue
            if record.get("t") == "turn":
                turns = max(turns, int(record.get("turn", 0)))
            if record.get("t") == "title":
                title = str(record.get("title") or "")
            elif record.get("time"):
                last = str(record["time"])
    if not title:
        first = next((ln for ln in lines[1:] if ln.startswith(b'{"t":"turn"')), None)
        if first is not None:
            try:
                title = title_of(str(json.loads(first).get("text", "")))
            except ValueError:
                title = ""
    rewound = len(read_rewinds(rewinds).dropped)
    return SessionInfo(session_id, title, created, last, turns, rewound)
