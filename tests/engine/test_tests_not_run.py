"""A test run that did not run is never "passed": not for the model, the account or the run.

Real pytest in temporary repositories: an interpreter without pytest, a `conftest.py` that
cannot import (exit status 4), no tests at all (exit status 5), and a test run that times out.
Each time the model closes with "Tests are green."; the run ends `incomplete`, and the model,
the run log, `run_finished` and the account all say what happened instead.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import answer, drive, results_read
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.account import account_lines

PASSING = "def test_ok():\n    assert 1 + 1 == 2\n"


def _no_pytest(repo: Path) -> dict[str, Any]:
    # The workspace's own interpreter is the one tests run with: here it has no pytest.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    (repo / "test_ok.py").write_text(PASSING)
    return {}


def _broken_conftest(repo: Path) -> dict[str, Any]:
    (repo / "conftest.py").write_text("import no_such_module\n")
    (repo / "test_ok.py").write_text(PASSING)
    return {}


def _no_tests(repo: Path) -> dict[str, Any]:
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    return {}


def _too_slow(repo: Path) -> dict[str, Any]:
    (repo / "test_slow.py").write_text("import time\n\n\ndef test_slow():\n    time.sleep(60)\n")
    return {"limits": {"command_timeout_seconds": 3}}


CASES = {
    "no pytest": (_no_pytest, ["No module named pytest in ", ".venv/bin/python"]),
    "conftest": (_broken_conftest, ["conftest.py", "No module named 'no_such_module'"]),
    "no tests": (_no_tests, ["no test was collected", "pytest looked in ."]),
    "timeout": (_too_slow, ["timed out after 3 s"]),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_test_run_that_did_not_run_is_said_so_everywhere(
    case: str, repo: Path, scripted: ScriptedModel
) -> None:
    prepare, said = CASES[case]
    overrides = prepare(repo)
    scripted.script = [tool_call("run_tests"), answer("Tests are green.")]
    driven = await drive(repo, scripted, overrides=overrides)

    # The model was told the tests did not run, and why.
    (told,) = results_read(scripted)
    assert told["success"] is False, told
    assert told["error"].startswith("tests did not run: "), told["error"]
    assert all(part in told["error"] for part in said), told["error"]
    assert told["data"]["passed"] is False

    # The run does not take "Tests are green." at its word.
    assert driven.outcome.status == "incomplete", driven.outcome.reason
    assert "the last test run did not run" in (driven.outcome.reason or "")

    # The account, in the run log and in run_finished alike.
    (finished,) = driven.of_type("run_finished")
    for account in (driven.log["account"], finished["account"]):
        tests = account["tests"]
        assert tests["outcome"] == "not_run", tests
        assert all(part in tests["reason"] for part in said), tests
    lines = account_lines(driven.log["account"])
    assert any(line.startswith("tests did not run: ") for line in lines), lines
    assert not any("passed" in line for line in lines), lines
    (event,) = driven.of_type("tests_finished")
    assert all(part in event["not_run"] for part in said), event


async def test_a_test_run_that_ran_still_ends_completed(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "test_ok.py").write_text(PASSING)
    scripted.script = [tool_call("run_tests"), answer("Tests are green.")]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed", driven.outcome.reason
    assert driven.log["account"]["tests"]["outcome"] == "passed"
    (event,) = driven.of_type("tests_finished")
    assert event["not_run"] is None
