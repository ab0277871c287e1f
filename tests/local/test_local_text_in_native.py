"""A call written as text in native mode, against llama-cpp-python's own server and the model.

The embedded runtime's server (`python -m llama_cpp.server`) with the embedded model, reached
as any OpenAI-compatible endpoint (`--base-url`): it takes `tools`, so Toolgate asks natively.
With `--chat_format chatml-function-calling` the model answered `functions.write_file:` and
nothing more; with the model's own template, a JSON call to a tool it invented. Each time the
run ended `completed` with nothing done. Now the answer is a failed call: the model is told,
then asked through the text protocol, and the run never ends `completed` on such an answer.

Asserts on the protocol, not on what this small model makes of the task.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import git

from toolgate.model.local import LocalModelServer

pytest.importorskip("llama_cpp", reason="the embedded model needs toolgate[local]")
pytestmark = pytest.mark.local_model

GREET = "def greet(name):\n    return 'Hi ' + name\n"
TEST_GREET = (
    "from greet import greet\n\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n"
)


@pytest.fixture
def greet_repo(repo: Path) -> Path:
    """The repository with greet.py and the test of it that fails."""
    (repo / "greet.py").write_text(GREET)
    (repo / "test_greet.py").write_text(TEST_GREET)
    git(repo, "add", "greet.py", "test_greet.py")
    git(repo, "commit", "-q", "-m", "greet")
    return repo


@pytest.fixture
def function_calling_server(tmp_path: Path) -> Iterator[LocalModelServer]:
    """The runtime's server with `--chat_format chatml-function-calling`."""
    with LocalModelServer(chat_format="chatml-function-calling", log_dir=tmp_path) as server:
        yield server


@pytest.fixture
def own_template_server(tmp_path: Path) -> Iterator[LocalModelServer]:
    """The runtime's server with no `--chat_format`: the model's own template."""
    with LocalModelServer(log_dir=tmp_path) as server:
        yield server


def run(repo: Path, server: LocalModelServer, task: str) -> tuple[int, dict[str, Any], str]:
    """`toolgate run TASK` against `server` as any endpoint: exit status, run log, stderr."""
    # A text-mode request sends the whole prompt anew: on a busy CPU this model reads it at a
    # few tokens a second, so the person's own file gives the run the time it needs.
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(
        "[limits]\nmax_run_seconds = 3600\n\n[model]\ntimeout_seconds = 1800\nmax_tokens = 384\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgate",
            "run",
            task,
            "--workspace",
            str(repo),
            "--base-url",
            server.base_url,
            "--model",
            server.model,
            "--approve",
            "auto",
            "--max-steps",
            "6",
        ],
        capture_output=True,
        text=True,
        timeout=3600,
        stdin=subprocess.DEVNULL,
    )
    logs = sorted((repo / ".toolgate" / "runs").glob("*.json"), key=lambda p: p.stat().st_mtime)
    assert logs, done.stderr
    return done.returncode, json.loads(logs[-1].read_text()), done.stderr


def calls(log: dict[str, Any]) -> list[dict[str, Any]]:
    """Every call of the run log, in order."""
    return [c for step in log["steps"] for c in step["calls"]]


def check_written_call_is_a_failed_call(
    repo: Path, status: int, log: dict[str, Any], stderr: str, expected: str
) -> None:
    """The protocol of a run whose first answer was a call written as text."""
    first = log["steps"][0]
    assert log["steps"][0]["tool_calling_mode"] == "native", first
    assert expected in first["assistant_text"], first  # what the real server answered
    written = [c for c in first["calls"] if c.get("written_as_text")]
    assert written, f"not taken for a failed call: {first}"
    # The model was told, and asked again: the run did not end on that answer.
    assert len(log["steps"]) >= 2, log
    # A second such answer moves the run, and the next one, to the text protocol.
    written_steps = [
        i for i, s in enumerate(log["steps"]) if any(c.get("written_as_text") for c in s["calls"])
    ]
    if len(written_steps) > 1:
        assert log["tool_calling_mode"] == "text", log["tool_calling_mode"]
        state = json.loads((repo / ".toolgate" / "state.json").read_text())
        (learned,) = state["tool_calling_modes"].values()
        assert learned["mode"] == "text"
    # Never `completed` on such an answer; exit 0 only when it is `completed`.
    last = log["steps"][-1]
    assert not (
        log["status"] == "completed" and any(c.get("written_as_text") for c in last["calls"])
    )
    if log["status"] == "completed":
        ran = [c for c in calls(log) if c.get("name") and (c.get("result") or {}).get("success")]
        assert ran, f"completed with nothing run: {log['steps']}"
    assert (status == 0) == (log["status"] == "completed"), (status, log["status"], stderr)


def test_chatml_function_calling_stub_is_a_failed_call(
    repo: Path, function_calling_server: LocalModelServer
) -> None:
    task = (
        "Create a file hello.py containing a function hello() that returns the string 'hello'. "
        "Use the write_file tool."
    )
    status, log, stderr = run(repo, function_calling_server, task)
    check_written_call_is_a_failed_call(repo, status, log, stderr, "functions.write_file")


def test_own_template_invented_tool_is_a_failed_call(
    greet_repo: Path, own_template_server: LocalModelServer
) -> None:
    task = "The test in test_greet.py fails. Fix greet.py so that the test passes."
    status, log, stderr = run(greet_repo, own_template_server, task)
    check_written_call_is_a_failed_call(greet_repo, status, log, stderr, '"name"')
