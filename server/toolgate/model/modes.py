"""What an endpoint was found to need, remembered per (base URL, model) in .toolgate/state.json.

Native or text tool calling, whether a request with tools may be streamed, and the form of
structured output the endpoint takes. Each is learned again after `RELEARN_AFTER`: servers are
upgraded (llama.cpp gains `--jinja`, a model gets a template with tools), and what one failed
request taught must not hold for ever.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from toolgate.workspace.files import atomic_write_text, toolgate_dir

NATIVE = "native"
TEXT = "text"
AUTO = "auto"
RELEARN_AFTER = timedelta(days=7)


class ModeMemory:
    """What auto-detection learned about an endpoint, kept in the workspace."""

    def __init__(self, root: Path) -> None:
        self.path = root / ".toolgate" / "state.json"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _key(base_url: str, model: str) -> str:
        return f"{base_url.rstrip('/')}|{model}"

    def _entry(self, table: str, base_url: str, model: str) -> dict[str, Any] | None:
        """What `table` holds for this endpoint, unless learned over `RELEARN_AFTER` ago.

        An entry without a time (written by an older version) is learned again as well.
        """
        entries = self._load().get(table)
        entry = entries.get(self._key(base_url, model)) if isinstance(entries, dict) else None
        if not isinstance(entry, dict):
            return None
        try:
            learned = datetime.fromisoformat(str(entry.get("learned_at")))
        except ValueError:
            return None
        if learned.tzinfo is None or datetime.now(timezone.utc) - learned > RELEARN_AFTER:
            return None
        return entry

    def get(self, base_url: str, model: str) -> str | None:
        """The mode learned for this endpoint and model, if any."""
        entry = self._entry("tool_calling_modes", base_url, model)
        return entry.get("mode") if entry is not None else None

    def remember(self, base_url: str, model: str, mode: str, reason: str) -> None:
        """Record what was learned and why."""
        self._put("tool_calling_modes", base_url, model, {"mode": mode, "reason": reason})

    def streams_tools(self, base_url: str, model: str) -> bool:
        """False once the endpoint answered a streamed request with tools with nothing."""
        return self._entry("tools_no_streaming", base_url, model) is None

    def remember_no_tool_streaming(self, base_url: str, model: str, reason: str) -> None:
        """Record that requests with tools go to this endpoint without streaming, and why."""
        self._put("tools_no_streaming", base_url, model, {"reason": reason})

    def structured_output(self, base_url: str, model: str) -> str | None:
        """The `response_format` type this endpoint was found to take ("text": none), if any."""
        entry = self._entry("structured_output", base_url, model)
        return entry.get("form") if entry is not None else None

    def remember_structured_output(self, base_url: str, model: str, form: str, reason: str) -> None:
        """Record the form of structured output this endpoint takes, and why not the others."""
        self._put("structured_output", base_url, model, {"form": form, "reason": reason})

    def _put(self, table: str, base_url: str, model: str, entry: dict[str, str]) -> None:
        toolgate_dir(self.path.parent.parent)
        data = self._load()
        entries = data.setdefault(table, {})
        learned_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        entries[self._key(base_url, model)] = {**entry, "learned_at": learned_at}
        atomic_write_text(self.path, json.dumps(data, indent=2) + "\n")
