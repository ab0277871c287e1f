"""End to end against the embedded model: a real llama.cpp server, a real model, a real run.

Asserts on the protocol, not on the quality of the code: a tool call arrives, its arguments
parse, and the file it proposes exists after approval.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="the embedded model needs toolgate[local]")
pytestmark = pytest.mark.local_model

TASK = (
    "Create the file hello.py. "
    'Step 1: call write_file with path "hello.py" and content "print(\'hello\')\\n". '
    "One tool block per answer."
)


def test_toolgate_run_uses_the_embedded_model_by_default(repo: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgate",
            "run",
            TASK,
            "--workspace",
            str(repo),
            "--approve",
            "auto",
            "--max-steps",
            "4",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    assert "embedded local model" in done.stderr  # said once, plainly
    logs = list((repo / ".toolgate" / "runs").glob("*.json"))
    assert len(logs) == 1, done.stderr
    log = json.loads(logs[0].read_text())
    assert log["tool_calling_mode"] == "text"
    assert log["base_url"].startswith("http://127.0.0.1:")
    calls = [c for step in log["steps"] for c in step["calls"] if c.get("name")]
    assert calls, f"no tool call parsed from the model's text: {log['steps']}"
    writes = [c for c in calls if c["name"] == "write_file"]
    assert writes, f"the model called {[c['name'] for c in calls]}"
    first = writes[0]
    assert isinstance(first["arguments"]["path"], str)
    assert isinstance(first["arguments"]["content"], str)
    assert first["decision"] == "approved"
    assert (repo / first["arguments"]["path"]).read_text() == first["arguments"]["content"]
    assert log["status"] in ("completed", "limit_reached"), log["reason"]


def test_toolgate_review_asks_the_embedded_model_in_the_form_it_takes(repo: Path) -> None:
    # llama-cpp-python refuses `json_schema` with HTTP 500; the embedded endpoint is known to
    # take `json_object`, so a review is not refused (and retried) before it is asked.
    (repo / "README.md").write_text("# Tiny project\n\nDivide by zero in `half()`.\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolgate", "review", "--workspace", str(repo), "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    assert "embedded local model" in done.stderr
    assert "refused structured output" not in done.stderr
    review = json.loads(done.stdout)
    assert review["metrics"]["output"] == "structured", done.stderr
