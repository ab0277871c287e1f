"""The run log: .toolgate/runs/<run_id>.json, rewritten atomically after every step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolgate.agent.events import Event, iso_utc
from toolgate.agent.redact import Redactor
from toolgate.workspace.files import atomic_write_text, toolgate_dir


class RunLog:
    """Everything a run did, kept valid on disk at every moment."""

    def __init__(
        self,
        root: Path,
        run_id: str,
        task: str,
        model: str,
        base_url: str,
        tool_calling_mode: str,
        redactor: Redactor,
        profile: str = "developer",
    ) -> None:
        self.path = toolgate_dir(root) / "runs" / f"{run_id}.json"
        self._redact = redactor
        self.doc: dict[str, Any] = {
            "run_id": run_id,
            "task": task,
            "profile": profile,
            "model": model,
            "base_url": base_url,
            "tool_calling_mode": tool_calling_mode,
            "status": "running",
            "reason": None,
            "started_at": iso_utc(),
            "finished_at": None,
            "answer": None,
            "steps": [],
            "events": [],
            "metrics": {},
        }

    def on_event(self, event: Event) -> None:
        """Append an event (a sink on the bus)."""
        # The bus already hid the run's secrets in every event's fields.
        self.doc["events"].append(event.to_dict())

    def begin_step(self, number: int) -> dict[str, Any]:
        """Open a new step (one model turn and its calls)."""
        step: dict[str, Any] = {
            "step": number,
            "started_at": iso_utc(),
            "assistant_text": "",
            "calls": [],
        }
        self.doc["steps"].append(step)
        return step

    def record_call(self, step: dict[str, Any], entry: dict[str, Any]) -> None:
        """Add one call with its decision and result to a step."""
        step["calls"].append(self._redact.deep(entry))

    def set(self, **fields: Any) -> None:
        """Update top-level fields."""
        self.doc.update(self._redact.deep(fields))

    def finish(self, status: str, reason: str | None, metrics: dict[str, Any]) -> None:
        """Close the log with the run's outcome."""
        self.doc.update(
            status=status, reason=self._redact.deep(reason), finished_at=iso_utc(), metrics=metrics
        )
        self.save()

    def save(self) -> None:
        """Write the whole log atomically, so a crash leaves the last valid version."""
        text = json.dumps(self.doc, indent=2, ensure_ascii=False, default=str)
        # A model can send lone surrogates; written as JSON escapes they keep the log valid.
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        atomic_write_text(self.path, text + "\n")
