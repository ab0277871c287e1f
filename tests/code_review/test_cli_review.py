"""`toolgate review [--staged]` in a real git repository against the scripted model."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import on_scripted, toolgate
from tests.conftest import git
from tests.support.calc_review import DIVISION_BY_ZERO
from tests.support.scripted_model import ScriptedModel

CALC = "def add(a, b):\n    return a + b\n"


def _project(repo: Path) -> Path:
    (repo / "calc.py").write_text(CALC)
    git(repo, "add", "calc.py")
    git(repo, "commit", "-q", "-m", "calc")
    return repo


def _user_prompt(scripted: ScriptedModel, index: int = 0) -> str:
    return str(scripted.requests[index]["messages"][1]["content"])


def test_comments_are_printed_and_a_rejection_exits_1(repo: Path, scripted: ScriptedModel) -> None:
    _project(repo)
    (repo / "calc.py").write_text(CALC + "\ndef half(x):\n    return x / 0\n")
    scripted.script = [
        {
            "content": json.dumps(
                {
                    "approved": False,
                    "comments": [
                        DIVISION_BY_ZERO,
                        {"path": "calc.py", "line": 4, "severity": "hint", "message": "Docstring?"},
                    ],
                }
            )
        }
    ]
    done = toolgate("review", *on_scripted(repo, scripted))
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "calc.py:5 error Division by zero.",
        "    suggested:     return x / 2",
        "calc.py:4 hint Docstring?",
    ]
    assert "not approved: 1 error, 1 hint" in done.stderr
    assert "    5 +     return x / 0" in _user_prompt(scripted)


def test_an_approval_exits_0_and_json_carries_the_review(
    repo: Path, scripted: ScriptedModel
) -> None:
    _project(repo)
    (repo / "calc.py").write_text(CALC.replace("a + b", "b + a"))
    scripted.script = [{"content": json.dumps({"approved": True, "comments": []})}]
    done = toolgate("review", "--json", "--focus", "naming", *on_scripted(repo, scripted))
    assert done.returncode == 0, done.stderr
    review = json.loads(done.stdout)
    assert review["approved"] is True and review["comments"] == []
    assert review["metrics"]["files_reviewed"] == 1
    assert "Focus on: naming" in _user_prompt(scripted)


def test_staged_reviews_only_what_is_staged(repo: Path, scripted: ScriptedModel) -> None:
    _project(repo)
    (repo / "calc.py").write_text(CALC + "# staged change\n")
    git(repo, "add", "calc.py")
    (repo / "other.py").write_text("# not staged\n")
    scripted.script = [{"content": json.dumps({"approved": True, "comments": []})}] * 2
    done = toolgate("review", "--staged", *on_scripted(repo, scripted))
    assert done.returncode == 0, done.stderr
    prompt = _user_prompt(scripted)
    assert "staged change" in prompt and "not staged" not in prompt
    # Without --staged the new untracked file is part of the change too.
    done = toolgate("review", *on_scripted(repo, scripted))
    assert done.returncode == 0, done.stderr
    assert "not staged" in _user_prompt(scripted, 1)


def test_a_model_without_structured_output_is_read_from_its_text(
    repo: Path, scripted: ScriptedModel
) -> None:
    _project(repo)
    (repo / "calc.py").write_text(CALC.replace("a + b", "a - b"))
    verdict = {
        "approved": False,
        "comments": [{"path": "calc.py", "line": 2, "severity": "major", "message": "Wrong sign."}],
    }
    scripted.script = [
        {"status": 400, "error": "Unsupported parameter: response_format"},
        {"status": 400, "error": "Unsupported parameter: response_format"},
        {"content": "My review:\n" + json.dumps(verdict) + "\nThat is all."},
    ]
    done = toolgate("review", *on_scripted(repo, scripted))
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == ["calc.py:2 error Wrong sign."]
    assert "refused structured output" in done.stderr
    assert "response_format" not in scripted.requests[2]


def test_no_changes_asks_nothing_and_outside_git_is_a_usage_error(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    done = toolgate("review", *on_scripted(repo, scripted))
    assert done.returncode == 0 and "nothing to review" in done.stderr
    assert scripted.requests == []
    plain = tmp_path / "plain"
    plain.mkdir()
    done = toolgate("review", *on_scripted(plain, scripted))
    assert done.returncode == 2
    assert done.stderr == (
        f"toolgate review: {plain.resolve()} is not in a git repository: the changes to review "
        "are read from git\n"
    )


def test_a_failing_endpoint_exits_1_with_one_line(repo: Path, scripted: ScriptedModel) -> None:
    _project(repo)
    (repo / "calc.py").write_text(CALC + "# x\n")
    scripted.script = [{"status": 401, "error": "bad key"}] * 2
    done = toolgate("review", *on_scripted(repo, scripted))
    assert done.returncode == 1
    assert "refused the API key" in done.stderr and "Traceback" not in done.stderr


def test_no_endpoint_is_a_configuration_error(repo: Path) -> None:
    _project(repo)
    (repo / "calc.py").write_text(CALC + "# x\n")
    done = toolgate("review", "--workspace", str(repo), without_local_runtime=True)
    assert done.returncode == 2, done.stderr
    assert "no model endpoint configured" in done.stderr and "Traceback" not in done.stderr
