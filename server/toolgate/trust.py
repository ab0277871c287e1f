"""Confirmations the person gave once, remembered in user-level state (not in the workspace)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from toolgate.workspace.files import atomic_write_text


def state_dir() -> Path:
    """Where user-level state lives."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "toolgate"


class TrustStore:
    """Per-workspace set of confirmed settings."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "trust.json"

    def _load(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def confirmed(self, root: Path) -> set[str]:
        """Fingerprints the person confirmed for this workspace."""
        return set(self._load().get(str(Path(os.path.realpath(root))), []))

    def confirm(self, root: Path, fingerprints: list[str]) -> None:
        """Remember confirmations for this workspace."""
        data = self._load()
        key = str(Path(os.path.realpath(root)))
        data[key] = sorted(set(data.get(key, [])) | set(fingerprints))
        atomic_write_text(self.path, json.dumps(data, indent=2) + "\n")
