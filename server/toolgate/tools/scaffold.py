"""`toolgate tools new`: a manifest, an entrypoint and a test stub that pass `validate` and run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from toolgate.tools.yaml_manifest import TOOL_FILE, WORKSPACE_TOOLS
from toolgate.workspace.files import atomic_write_text

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")

_PYTHON = '''"""{name}: {capability}. Reads JSON arguments on stdin, prints one JSON result."""

import json
import sys


def main() -> None:
    args = json.load(sys.stdin)
    print("{name}: working", file=sys.stderr)  # stderr is progress, shown as the tool runs
    # Replace this with the real work; the result must match output_schema in tool.yaml.
    summary = ", ".join(f"{{key}}={{value}}" for key, value in sorted(args.items()))
    result = {outputs}
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
'''

_SHELL = """#!/bin/sh
# {name}: {capability}. Reads JSON arguments on stdin, prints one JSON result on stdout.
set -eu
input=$(cat)
echo "{name}: working" >&2
# Replace this with the real work; the result must match output_schema in tool.yaml.
bytes=$(printf '%s' "$input" | wc -c | tr -d ' ')
printf '{outputs}\\n' {values}
"""

_TEST = '''"""A first test of {name}: run its entrypoint as Toolgate does and check the result."""

import json
import subprocess
import sys
from pathlib import Path

import yaml
from jsonschema import validate

HERE = Path(__file__).parent


def test_{ident}_prints_a_result_matching_its_output_schema() -> None:
    manifest = yaml.safe_load((HERE / "tool.yaml").read_text())
    argv = list(manifest["entrypoint"])
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    done = subprocess.run(
        argv, cwd=HERE, input=json.dumps({sample}), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    validate(json.loads(done.stdout), manifest["output_schema"])
'''


class ScaffoldError(ValueError):
    """The tool cannot be created (bad name, folder already there)."""


def scaffold(
    root: Path,
    name: str,
    capability: str,
    *,
    language: str = "python",
    inputs: list[str] | None = None,
    outputs: list[str] | None = None,
    description: str | None = None,
) -> list[Path]:
    """Write `tools/NAME/` (tool.yaml, entrypoint, test stub); returns the files written."""
    from toolgate.tools.capabilities import CAPABILITY

    if not _NAME.match(name):
        raise ScaffoldError(f"{name!r} is not a tool name (letters, digits, _ and -)")
    if not CAPABILITY.match(capability):
        raise ScaffoldError(f"{capability!r} is not a capability name (domain.action)")
    folder = root / WORKSPACE_TOOLS / name
    if folder.exists():
        raise ScaffoldError(f"{folder} already exists; nothing was written")
    inputs = inputs or ["text"]
    outputs = outputs or ["result"]
    entry = "main.py" if language == "python" else "run.sh"
    manifest: dict[str, Any] = {
        "name": name,
        "version": "0.1.0",
        "description": description or f"Provides {capability}.",
        "capabilities": [capability],
        "input_schema": {
            "type": "object",
            "properties": {key: {"type": "string"} for key in inputs},
            "required": list(inputs),
            "additionalProperties": False,
        },
        "output_schema": {
            "type": "object",
            "properties": {key: {"type": "string"} for key in outputs},
            "required": list(outputs),
        },
        "entrypoint": ["python3", entry] if language == "python" else ["sh", entry],
        "dependencies": [],
        "idempotency": "idempotent",
        "stability": "experimental",
        "priority": 50,
        "timeout_seconds": 30,
        "gate": "ask",
    }
    if language == "python":
        result = "{" + ", ".join(f'"{key}": summary' for key in outputs) + "}"
        code = _PYTHON.format(name=name, capability=capability, outputs=result)
    else:
        fmt = "{" + ", ".join(f'"{key}": "received %s bytes"' for key in outputs) + "}"
        code = _SHELL.format(
            name=name,
            capability=capability,
            outputs=fmt,
            values=" ".join('"$bytes"' for _ in outputs),
        )
    ident = re.sub(r"\W", "_", name)
    sample = json.dumps({key: "example" for key in inputs})
    files = {
        folder / TOOL_FILE: '# A Toolgate tool: see docs/TOOLS.md, "Adding a tool".\n'
        + yaml.safe_dump(manifest, sort_keys=False),
        folder / entry: code,
        folder / f"test_{ident}.py": _TEST.format(name=name, ident=ident, sample=sample),
    }
    folder.mkdir(parents=True)
    for path, text in files.items():
        atomic_write_text(path, text)
    (folder / entry).chmod(0o755)
    return list(files)
