"""The run log: .toolgate/runs/<run_id>.json, rewritten atomically after every step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolgate.agent.events import Event, iso_utc, logged_type
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


class RunLogError(Exception):
    """A run log that does not exist or cannot be read; the message says which."""


def runs_dir(root: Path) -> Path:
    """Where a workspace's run logs are."""
    return root / ".toolgate" / "runs"


def read_run_log(root: Path, run_id: str) -> dict[str, Any]:
    """One run's log, with event names and times as today's Toolgate writes them."""
    if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith("."):
        raise RunLogError(f"{run_id!r} is not a run id")
    path = runs_dir(root) / f"{run_id}.json"
    try:
        doc = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise RunLogError(f"no run {run_id} in {root} (toolgate runs list shows them)") from None
    except (OSError, ValueError) as exc:
        raise RunLogError(f"the run log {path} cannot be read: {exc}") from None
    if not isinstance(doc, dict):
        raise RunLogError(f"{path} is not a run log")
    return _current_form(doc)


def _current_form(doc: dict[str, Any]) -> dict[str, Any]:
    """Older logs named events in CamelCase and timed them in epoch seconds."""
    events = []
    for event in doc.get("events") or []:
        if not isinstance(event, dict):
            continue
        event = {**event, "type": logged_type(event)}
        if isinstance(event.get("time"), (int, float)):
            event["time"] = iso_utc(float(event["time"]))
        events.append(event)
    return {**doc, "events": events, "steps": doc.get("steps") or []}


def run_logs(root: Path) -> list[dict[str, Any]]:
    """Every readable run log of a workspace, oldest first (unreadable ones are skipped)."""
    folder = runs_dir(root)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob("*.json"):
        try:
            found.append(read_run_log(root, path.stem))
        except RunLogError:
            continue
    found.sort(key=lambda doc: str(doc.get("started_at") or ""))
    return found
