"""The run's account says what was done in words; the machine-readable list stays beside it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import toolgate, toolgate_task
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.done_words import done_words
from toolgate.tools.builtins import builtin_registry

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
SAID = "done: read calc.py, edited calc.py (+1 −1), ran the tests (1 passed)"


def test_the_account_names_what_was_done_in_words(repo: Path, scripted: ScriptedModel) -> None:
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TEST)
    scripted.script = [
        tool_call("read_file", path="calc.py"),
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        tool_call("run_tests"),
        {"content": "Fixed."},
    ]
    done = toolgate_task("run", "Fix add.", repo, scripted, "--approve", "auto", "--json")
    assert done.returncode == 0, done.stderr
    # One line, and no call ids or capabilities in it.
    assert SAID in [line.strip() for line in done.stderr.splitlines()]

    # The machine-readable form stays: --json, the run log, and `runs show` in words again.
    finished = json.loads(done.stdout.splitlines()[-1])
    account = finished["account"]
    assert [d.split()[1] for d in account["done"]] == ["fs.read", "fs.edit", "tests.run"]
    assert account["did"] == ["read calc.py", "edited calc.py (+1 −1)", "ran the tests (1 passed)"]
    (log,) = (repo / ".toolgate" / "runs").glob("*.json")
    assert json.loads(log.read_text())["account"]["done"] == account["done"]
    shown = toolgate("runs", "show", log.stem, "--workspace", str(repo)).stdout
    assert SAID in [line.strip() for line in shown.splitlines()]


def test_words_for_a_partial_change_repeats_failures_and_unknown_tools() -> None:
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+A\n@@ -9 +9,2 @@\n-b\n+B\n+C\n"
    events = [
        {"type": "proposal_created", "proposal_id": "p-1", "diff": diff},
        {
            "type": "proposal_resolved",
            "proposal_id": "p-1",
            "status": "partially_accepted",
            "hunks_applied": [1],
        },
    ]
    ok = {"success": True, "data": {}}
    steps = [
        {
            "calls": [
                {"name": "read_file", "arguments": {"path": "a.py"}, "result": ok},
                {"name": "read_file", "arguments": {"path": "a.py"}, "result": ok},
                {"name": "write_file", "arguments": {"path": "b.py"}, "result": {"success": False}},
                {
                    "name": "edit_file",
                    "arguments": {"path": "a.py"},
                    "proposal_id": "p-1",
                    "result": ok,
                },
                {"name": "git_add", "arguments": {"files": ["a.py", "b.py"]}, "result": ok},
                {"name": "run_command", "arguments": {"command": "make   lint"}, "result": ok},
                {
                    "name": "run_tests",
                    "arguments": {},
                    "result": {
                        "success": True,
                        "data": {"summary": {"passed": 3, "failed": 1, "errors": 1}},
                    },
                },
                {"name": "docs__render", "arguments": {}, "result": ok},
            ]
        },
    ]
    assert done_words(events, steps, builtin_registry()) == [
        "read a.py ×2",
        "edited a.py (+2 −1, partly)",
        "staged a.py, b.py",
        "ran make lint",
        "ran the tests (3 passed, 1 failed, 1 error)",
        "used docs__render",
    ]
