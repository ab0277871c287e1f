"""The server module loads little more than pygls: the engine waits until a run needs it."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = [
    "toolgate.agent.loop",
    "toolgate.agent.gate",
    "toolgate.session",
    "toolgate.tools",
    "toolgate.calls",
    "toolgate.model",
    "toolgate.review",
    "toolgate.config",
    "jsonschema",
    "unidiff",
    "openai",
]


def test_server_module_does_not_import_the_engine() -> None:
    code = (
        "import json, sys\n"
        "import toolgate.cli.command, toolgate.lsp.server\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert json.loads(out) == []
