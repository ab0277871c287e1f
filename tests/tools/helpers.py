"""Writing `tool.yaml` tools into temporary workspaces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ECHO = """import json, sys
args = json.load(sys.stdin)
print("echo: got", sorted(args), file=sys.stderr)
json.dump({"text": args["text"].upper(), "length": len(args["text"])}, sys.stdout)
"""


def manifest(name: str = "shout", **fields: Any) -> dict[str, Any]:
    """A valid manifest, with `fields` replacing its defaults (None removes a field)."""
    doc: dict[str, Any] = {
        "name": name,
        "version": "1.0.0",
        "description": "Upper-case a text.",
        "capabilities": ["text.shout"],
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        "output_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "length": {"type": "integer"}},
            "required": ["text", "length"],
        },
        "entrypoint": ["python3", "main.py"],
        "stability": "stable",
        "priority": 50,
        "timeout_seconds": 20,
        "gate": "auto",
    }
    for key, value in fields.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def write_tool(root: Path, doc: dict[str, Any], code: str = ECHO, file: str = "main.py") -> Path:
    """Write tools/NAME/tool.yaml and its entrypoint; returns the manifest's path."""
    folder = root / "tools" / doc["name"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / file).write_text(code)
    path = folder / "tool.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path
