"""`toolgate demo`, the README's main job, against the scripted model server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.net import closed_port
from tests.support.scripted_model import ScriptedModel, tool_call


def test_demo_shows_the_diff_the_tests_and_the_commit(scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call(
            "edit_file", path="greet.py", search='"Hello " + name', replace='"Hello, " + name + "!"'
        ),
        tool_call("run_tests"),
        tool_call("git_add", files=["greet.py"]),
        tool_call("git_commit", message="Fix the greeting"),
        {"content": "The greeting now has a comma and an exclamation mark."},
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgate",
            "demo",
            "--base-url",
            scripted.base_url,
            "--model",
            scripted.model,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert '-    return "Hello " + name' in err and '+    return "Hello, " + name + "!"' in err
    assert "tests: 1 passed, 0 failed" in err
    assert "Fix the greeting" in err.split("git log:")[1]
    assert "(clean)" in err.split("git status:")[1]
    assert done.stdout.strip() == "The greeting now has a comma and an exclamation mark."


def _demo(*flags: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgate", "demo", *flags],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(tmp)},
    )


def test_an_unreachable_model_stops_the_demo_before_it_makes_a_project(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = _demo("--base-url", url, "--model", "m", tmp=tmp_path)
    assert done.returncode == 1
    assert f"toolgate demo: cannot reach the model at {url}" in done.stderr
    assert list(tmp_path.glob("toolgate-demo-*")) == []
    assert "throw-away project" not in done.stderr
    assert "run log" not in done.stderr


def test_a_failed_run_fails_the_demo_and_names_a_run_log_that_exists(
    scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.script = [{"status": 500, "error": "the model fell over"}] * 4
    done = _demo("--base-url", scripted.base_url, "--model", scripted.model, tmp=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "failed — the model endpoint answered HTTP 500: the model fell over" in done.stderr
    assert "toolgate demo: the run did not complete" in done.stderr
    said = re.search(r"toolgate demo: the run log is in (\S+)", done.stderr)
    assert said is not None, done.stderr
    logs = list(Path(said.group(1)).glob("*.json"))
    assert len(logs) == 1
    assert json.loads(logs[0].read_text(encoding="utf-8"))["status"] == "failed"
