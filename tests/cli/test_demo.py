"""`toolgate demo`, the README's main job, against the scripted model server."""

from __future__ import annotations

import subprocess
import sys

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
