"""The README's main job, `toolgate demo`, with the embedded model: the fix lands as a commit.

The demo's task spells out its four steps, so at temperature 0 the small model is expected to do
them all; a change to the engine or its prompts that loses a step fails here.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("llama_cpp", reason="the embedded model needs toolgate[local]")
pytestmark = pytest.mark.local_model


def test_the_demo_edits_tests_and_commits_with_the_embedded_model() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolgate", "demo"],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "embedded local model" in out
    assert '+    return "Hello, " + name + "!"' in out, out[-3000:]  # the diff shown
    assert "tests: 1 passed, 0 failed" in out, out[-3000:]
    history = out[out.index("git log:") :]
    assert "Fix the greeting" in history, out[-3000:]  # committed
    assert "completed" in out
