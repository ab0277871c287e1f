"""A call written as text in native mode, against llama-cpp-python's own server and the model.

The embedded runtime's server (`python -m llama_cpp.server`) with the embedded model, reached
as any OpenAI-compatible endpoint (`--base-url`): it takes `tools`, so Toolgate asks natively.
With `--chat_format chatml-function-calling` the model answers `functions.write_file:` and
nothing more (llama-cpp-python 0.3.36 holds a message to the grammar of its tool names); with
the model's own template, a JSON call in its text (the server never returns `tool_calls` there):
to a tool it invented, or with keys no syntax reads. Each time the run ended `completed` with
nothing done. Now such an answer is a failed call: the model is told, then asked through the
text protocol, and the run never ends `completed` on it.

Asserts on the protocol, not on what this small model makes of the task: its answers change
with Toolgate's prompt, so a call the text protocol reads whole (and runs) passes too.
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

SOURCES = {
    "greet": (
        "def greet(name):\n    return 'Hi ' + name\n",
        "from greet import greet\n\n\n"
        "def test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n",
    ),
    "calc": (
        "def add(a, b):\n    return a - b\n",
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    ),
}


def project(repo: Path, name: str) -> Path:
    """The repository with NAME.py and the test of it that fails, committed."""
    (repo / f"{name}.py").write_text(SOURCES[name][0])
    (repo / f"test_{name}.py").write_text(SOURCES[name][1])
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", name)
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
        "[limits]\nmax_run_seconds = 3600\n\n"
        "[model]\ntimeout_seconds = 1800\nmax_tokens = 384\ntemperature = 0\n"
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


def written(step: dict[str, Any]) -> bool:
    """Whether a step's answer was recorded as a call written as text."""
    return any(c.get("written_as_text") for c in step["calls"])


def check_call_in_text_is_never_the_answer(
    repo: Path, status: int, log: dict[str, Any], stderr: str, expected: str
) -> None:
    """The protocol of a run whose first answer, asked natively, was a call in its text."""
    first = log["steps"][0]
    assert first["tool_calling_mode"] == "native", first
    assert expected in first["assistant_text"], first  # what the real server answered
    # Either the text protocol reads it whole (then the run goes on in text mode and runs it),
    # or it is a failed call and the model is told: never the final answer.
    read_whole = [c for c in first["calls"] if c.get("name") and c.get("syntax")]
    assert read_whole or written(first), f"the call in the text was taken for words: {first}"
    assert len(log["steps"]) >= 2, log
    # A second such answer moves the run, and the next one, to the text protocol.
    if read_whole or sum(written(s) for s in log["steps"]) > 1:
        assert log["tool_calling_mode"] == "text", log["tool_calling_mode"]
        state = json.loads((repo / ".toolgate" / "state.json").read_text())
        (learned,) = state["tool_calling_modes"].values()
        assert learned["mode"] == "text"
    # Never `completed` on such an answer, nor with nothing run; exit 0 only when `completed`.
    if log["status"] == "completed":
        assert not written(log["steps"][-1]), log["steps"][-1]
        ran = [c for c in calls(log) if c.get("name") and (c.get("result") or {}).get("success")]
        assert ran, f"completed with nothing run: {log['steps']}"
    assert (status == 0) == (log["status"] == "completed"), (status, log["status"], stderr)


def test_chatml_function_calling_stub_is_never_the_answer(
    repo: Path, function_calling_server: LocalModelServer
) -> None:
    task = (
        "Create a file hello.py containing a function hello() that returns the string 'hello'. "
        "Use the write_file tool."
    )
    status, log, stderr = run(repo, function_calling_server, task)
    check_call_in_text_is_never_the_answer(repo, status, log, stderr, "functions.write_file")


# The person's words, as the issue reported them: the model's answers were
# `{"name": "run_greet", "arguments": {…}}` and `{"name": "test_calc.py", "arguments": {…}}`.
TASKS = {
    "greet": "The test in test_greet.py fails. Fix greet.py so that the test passes.",
    "calc": "The test in test_calc.py fails. Fix calc.py so that the tests pass.",
}


@pytest.mark.parametrize("name", TASKS)
def test_own_template_call_in_the_text_is_never_the_answer(
    repo: Path, own_template_server: LocalModelServer, name: str
) -> None:
    workspace = project(repo, name)
    status, log, stderr = run(workspace, own_template_server, TASKS[name])
    check_call_in_text_is_never_the_answer(workspace, status, log, stderr, '"name"')
