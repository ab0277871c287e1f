"""Every sandbox refusal, as the model reads it at the end of a real run, and the disk untouched."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import git
from tests.engine.helpers import answer, calls, drive, results_read, snapshot
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.workspace.files import toolgate_dir

LIMIT = 4096


@pytest.fixture
def layout(repo: Path) -> dict[str, Path]:
    """A workspace with traps: links out of the root, nested .git folders, a big file."""
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (repo / "a.txt").write_text("x\n")
    (repo / "big.txt").write_text("b" * (LIMIT + 1))
    (repo / "link.txt").symlink_to(outside / "secret.txt")  # absolute target
    (repo / "rellink.txt").symlink_to(Path("..") / "outside" / "secret.txt")
    (repo / "linkdir").symlink_to(outside, target_is_directory=True)
    (repo / "gitlink").symlink_to(".git", target_is_directory=True)
    (repo / "sub" / ".git").mkdir(parents=True)
    (repo / "sub" / ".git" / "x").write_text("nested repository data\n")
    git(repo, "add", "a.txt", "big.txt")
    git(repo, "commit", "-q", "-m", "traps")
    toolgate_dir(repo)  # the run log's folder, so that its creation does not touch the root
    return {"repo": repo, "outside": outside}


def _refusals(outside: Path) -> list[tuple[str, dict[str, Any], str]]:
    secret = str(outside / "secret.txt")
    new = str(outside / "new.txt")
    bad_paths = [
        ("/etc/passwd", "absolute"),
        (secret, "absolute"),
        ("~/secret.txt", "absolute"),
        ("../outside/secret.txt", "'..'"),
        ("sub/../../outside/secret.txt", "'..'"),
        ("link.txt", "outside the workspace"),
        ("rellink.txt", "outside the workspace"),
        ("linkdir/secret.txt", "outside the workspace"),
        (".git/config", ".git"),
        (".GIT/config", ".git"),
        ("sub/.git/x", ".git"),
        ("sub/.Git/x", ".git"),
        ("gitlink/config", ".git"),
        ("a\x00b.txt", "NUL"),
    ]
    cases: list[tuple[str, dict[str, Any], str]] = []
    for path, why in bad_paths:
        cases.append(("read_file", {"path": path}, why))
        cases.append(("write_file", {"path": path, "content": "pwned\n"}, why))
        cases.append(("edit_file", {"path": path, "search": "secret", "replace": "pwned"}, why))
    cases += [
        ("read_file", {"path": "big.txt"}, "over the limit"),
        ("write_file", {"path": new, "content": "pwned\n"}, "absolute"),
        ("write_file", {"path": "../outside/new.txt", "content": "pwned\n"}, "'..'"),
        ("write_file", {"path": "linkdir/new.txt", "content": "pwned\n"}, "outside the workspace"),
        ("write_file", {"path": ".git/hooks/post-checkout", "content": "#!/bin/sh\n"}, ".git"),
        ("write_file", {"path": "gitlink/hooks/pre-commit", "content": "#!/bin/sh\n"}, ".git"),
        ("write_file", {"path": "a.txt", "content": "y" * (LIMIT + 1)}, "over the limit"),
        ("write_file", {"path": "fresh.txt", "content": "é" * LIMIT}, "over the limit"),
        ("write_file", {"path": ".toolgate/config.toml", "content": "x = 1\n"}, ".toolgate"),
        ("edit_file", {"path": "a.txt", "search": "x", "replace": "y" * (LIMIT + 1)}, "limit"),
        ("edit_file", {"path": "big.txt", "search": "bb", "replace": "b"}, "over the limit"),
        ("list_directory", {"path": "linkdir"}, "outside the workspace"),
        ("list_directory", {"path": "../outside"}, "'..'"),
        ("list_directory", {"path": "/"}, "absolute"),
        ("list_directory", {"path": ".git"}, ".git"),
        ("search_code", {"pattern": "secret", "path": "linkdir"}, "outside the workspace"),
        ("search_code", {"pattern": "secret", "path": "../outside"}, "'..'"),
        ("search_code", {"pattern": "core", "path": ".git"}, ".git"),
        ("git_add", {"files": ["linkdir/secret.txt"]}, "outside the workspace"),
        ("git_add", {"files": ["a.txt", "../outside/secret.txt"]}, "'..'"),
        ("git_add", {"files": [".git/config"]}, ".git"),
        ("git_add", {"files": [secret]}, "absolute"),
        ("run_tests", {"cwd": "linkdir"}, "outside the workspace"),
        ("run_tests", {"cwd": "../outside"}, "'..'"),
        ("run_tests", {"cwd": "/tmp"}, "absolute"),
    ]
    return cases


CASES = _refusals(Path("/OUTSIDE"))


async def test_every_refusal_is_a_result_and_disk_is_untouched(
    layout: dict[str, Path], scripted: ScriptedModel
) -> None:
    # All refusals in one model turn (they run in order); AutoReviewer approves everything,
    # so anything the sandbox let through would really land on disk.
    repo, outside = layout["repo"], layout["outside"]
    cases = _refusals(outside)
    scripted.script = [calls(*[(name, args) for name, args, _ in cases]), answer()]
    before = snapshot(repo, outside)
    driven = await drive(repo, scripted, overrides={"limits": {"max_file_bytes": LIMIT}})
    # Every change was refused, so the answer after them is not taken at its word.
    assert driven.outcome.status == "incomplete", driven.outcome
    results = results_read(scripted)
    assert len(results) == len(cases)
    wrong = []
    for (name, args, why), result in zip(cases, results, strict=True):
        error = result.get("error") or ""
        if result["success"] or why.lower() not in error.lower() or "Traceback" in error:
            wrong.append((name, args if len(repr(args)) < 200 else "…", why, result))
    assert wrong == []
    assert snapshot(repo, outside) == before
    assert not (repo / ".toolgate" / "config.toml").exists()
    assert (outside / "secret.txt").read_text() == "secret\n"
    executed = driven.of_type("tool_call_executed")
    assert [(e["tool_name"], e["success"]) for e in executed] == [(n, False) for n, _, _ in cases]


@pytest.mark.parametrize(
    ("name", "args", "status"),
    [
        # A refused read changes nothing the answer could claim; a refused change does.
        ("read_file", {"path": "../outside/secret.txt"}, "completed"),
        ("write_file", {"path": "linkdir/new.txt", "content": "pwned\n"}, "incomplete"),
        ("edit_file", {"path": ".git/config", "search": "[core]", "replace": "[x]"}, "incomplete"),
    ],
)
async def test_one_refusal_per_turn(
    layout: dict[str, Path], scripted: ScriptedModel, name: str, args: dict[str, Any], status: str
) -> None:
    # The same refusals alone in their turn, so a turn-level shortcut cannot hide one.
    repo, outside = layout["repo"], layout["outside"]
    scripted.script = [tool_call(name, **args), answer()]
    before = snapshot(repo, outside)
    driven = await drive(repo, scripted)
    (result,) = results_read(scripted)
    assert result["success"] is False and result["error"]
    assert driven.outcome.status == status
    assert snapshot(repo, outside) == before


async def test_refusals_leave_git_index_alone(
    layout: dict[str, Path], scripted: ScriptedModel
) -> None:
    repo = layout["repo"]
    scripted.script = [
        tool_call("git_add", files=["a.txt", "linkdir/secret.txt"]),
        answer(),
    ]
    (repo / "a.txt").write_text("changed\n")
    await drive(repo, scripted)
    # one bad path refuses the whole call: a.txt was not staged either
    assert git(repo, "diff", "--cached", "--name-only").strip() == ""


def test_cases_cover_each_refusal_kind() -> None:
    kinds = {why for _, _, why in CASES}
    assert {"absolute", "'..'", "outside the workspace", ".git", "NUL", "over the limit"} <= kinds
    assert os.sep == "/"  # the paths above are POSIX paths
