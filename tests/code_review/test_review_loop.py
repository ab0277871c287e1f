"""`toolgate run --review-loop`: implement, review, implement again, test — in a real repo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.helpers import toolgate_task
from tests.conftest import git
from tests.support.scripted_model import ScriptedModel, tool_call

TEST = "from calc import half\n\n\ndef test_half():\n    assert half(4) == 2\n"
BUGGY = "def half(x):\n    return x // 0\n"
FIXED = "def half(x):\n    return x / 2\n"

REJECT = {
    "approved": False,
    "comments": [
        {
            "path": "calc.py",
            "line": 2,
            "severity": "error",
            "message": "Dividing by zero raises ZeroDivisionError.",
            "suggestion": "    return x / 2",
        }
    ],
}
APPROVE = {"approved": True, "comments": [], "metrics": {"risk": "low"}}


def _project(repo: Path) -> Path:
    (repo / "test_calc.py").write_text(TEST)
    git(repo, "add", "test_calc.py")
    git(repo, "commit", "-q", "-m", "the test")
    return repo


def _implement(entry: dict[str, Any]) -> Any:
    """An implementation turn: asked with tools, never with a response format."""

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        assert body.get("tools") and "response_format" not in body, body.keys()
        return entry

    return answer


def _review(verdict: dict[str, Any]) -> Any:
    """A review: asked against the review schema, with no tools."""

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        assert "tools" not in body
        assert body["response_format"]["json_schema"]["name"] == "code_review"
        return {"content": json.dumps(verdict)}

    return answer


def _reviews(scripted: ScriptedModel) -> list[dict[str, Any]]:
    return [r for r in scripted.requests if "response_format" in r]


def test_the_first_review_rejects_the_second_approves_and_the_tests_run(
    repo: Path, scripted: ScriptedModel
) -> None:
    _project(repo)
    scripted.script = [
        _implement(tool_call("write_file", path="calc.py", content=BUGGY)),
        _implement({"content": "Wrote calc.py."}),
        _review(REJECT),
        _implement(tool_call("write_file", path="calc.py", content=FIXED)),
        _implement({"content": "Fixed the division."}),
        _review(APPROVE),
    ]
    done = toolgate_task(
        "run", "Add half() to calc.py.", repo, scripted, "--review-loop", "--approve", "auto"
    )
    assert done.returncode == 0, done.stderr
    assert (repo / "calc.py").read_text() == FIXED
    first, second = _reviews(scripted)
    # The first review sees the new file with its lines numbered; the second the whole change.
    assert "    2 +     return x // 0" in first["messages"][1]["content"]
    assert "    2 +     return x / 2" in second["messages"][1]["content"]
    # The second implementation turn carries the comments, in the same session.
    fix_turn = next(
        r for r in scripted.requests[3:] if r.get("tools") and "response_format" not in r
    )
    asked = fix_turn["messages"][-1]["content"]
    assert "calc.py:2 [error] Dividing by zero" in asked and "return x / 2" in asked
    assert any("Add half() to calc.py." in str(m.get("content")) for m in fix_turn["messages"])
    err = done.stderr
    assert "reviewing the change to 1 file…" in err
    assert "review: not approved: 1 error" in err
    assert "calc.py:2 error Dividing by zero raises ZeroDivisionError." in err
    assert "round 1: run" in err and "review not approved: 1 error" in err
    assert "round 2: run" in err and "review approved: no comments" in err
    assert "tests: 1 passed, 0 failed, 0 errors" in err
    assert err.rstrip().splitlines()[-2].endswith("review loop completed")
    # The loop keeps its account in a log of its own, beside the runs' logs.
    [loop_log] = (repo / ".toolgate" / "runs").glob("loop-*.json")
    kept = json.loads(loop_log.read_text())
    assert kept["status"] == "completed" and kept["metrics"]["rounds"] == 2
    assert [r["review"]["approved"] for r in kept["rounds"]] == [False, True]
    assert kept["tests"]["passed"] is True


def test_no_approval_within_max_rounds_exits_1_after_the_tests(
    repo: Path, scripted: ScriptedModel
) -> None:
    _project(repo)
    (repo / ".toolgate").mkdir(exist_ok=True)
    (repo / ".toolgate" / "config.toml").write_text("[review]\nmax_rounds = 1\n")
    scripted.script = [
        _implement(tool_call("write_file", path="calc.py", content=FIXED)),
        _implement({"content": "Done."}),
        _review(REJECT),
    ]
    done = toolgate_task(
        "run", "Add half().", repo, scripted, "--review-loop", "--approve", "auto", "--json"
    )
    assert done.returncode == 1, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    [finished] = [e for e in events if e["type"] == "ReviewLoopFinished"]
    assert finished["status"] == "not_approved" and len(finished["rounds"]) == 1
    assert finished["tests"]["passed"] is True  # the tests still ran, and passed
    assert [e["review"]["approved"] for e in events if e["type"] == "CodeReviewed"] == [False]
    assert len(_reviews(scripted)) == 1


def test_a_refused_change_ends_the_loop_before_any_review(
    repo: Path, scripted: ScriptedModel
) -> None:
    _project(repo)
    scripted.script = [
        _implement(tool_call("write_file", path="calc.py", content=FIXED)),
        _implement({"content": "Done."}),
    ]
    done = toolgate_task("run", "Add half().", repo, scripted, "--review-loop", "--approve", "deny")
    assert done.returncode == 1
    assert "review loop incomplete" in done.stderr
    assert _reviews(scripted) == []
