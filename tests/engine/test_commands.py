"""Commands through a real run: the allow-list, no shell, timeouts, capped output."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from tests.engine.helpers import (
    ScriptedReviewer,
    answer,
    calls,
    drive,
    fast_pytest,
    results_read,
    snapshot,
)
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.review.reviewer import AutoReviewer
from toolgate.workspace.files import toolgate_dir


def _python(code: str) -> str:
    """A command line running `code` with this interpreter."""
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


ALLOW_PYTHON = {
    "policy": {"allowed_commands": ["pytest", "python -m pytest", shlex.quote(sys.executable)]}
}


async def test_off_allow_list_asks_for_that_exact_command(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("run_tests", command="touch made-by-model.txt", _reasoningForCall="need it"),
        tool_call("run_tests", command="touch made-by-model.txt"),
        answer(),
    ]
    driven = await drive(
        repo, scripted, reviewer=lambda ws: ScriptedReviewer(ws, confirms=["not now", True])
    )
    first, second = driven.run.reviewer.requests
    assert second.summary == first.summary
    assert first.tool == "run_tests" and first.off_allow_list is True
    assert first.summary == "touch made-by-model.txt"
    assert first.why == "need it"
    refused, ran = results_read(scripted)
    assert refused["success"] is False and "not now" in refused["error"]
    assert ran["success"] is True, ran
    assert ran["data"]["argv"] == ["touch", "made-by-model.txt"]
    assert (repo / "made-by-model.txt").exists()
    assert [c["decision"] for c in driven.calls()] == ["rejected", "approved"]


@pytest.mark.parametrize(
    "overrides",
    [None, {"policy": {"approvals": {"run_tests": "auto", "run_command": "auto"}}}],
    ids=["defaults", "tools-approved-auto"],
)
async def test_auto_approval_never_covers_a_command_off_the_list(
    repo: Path, scripted: ScriptedModel, overrides: dict | None
) -> None:
    scripted.script = [
        calls(
            ("run_tests", {"command": "touch pwned-1"}),
            ("run_command", {"command": "touch pwned-2"}),
        ),
        answer(),
    ]
    toolgate_dir(repo)
    before = snapshot(repo)
    await drive(repo, scripted, reviewer=AutoReviewer, overrides=overrides)
    for result in results_read(scripted):
        assert result["success"] is False
        assert "auto-approval never covers" in result["error"], result
    assert snapshot(repo) == before


async def test_shell_metacharacters_are_literal(
    repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_pytest(monkeypatch)
    lines = [
        "pytest -q ; touch pwned-semicolon",
        "python -m pytest -q && touch pwned-and",
        "pytest -q | tee pwned-pipe",
        "pytest -q > pwned-redirect",
        "pytest -q $(touch pwned-subst)",
        "pytest -q `touch pwned-backtick`",
        "pytest; touch pwned-glued",  # argv[0] is "pytest;": off the list, approved below
    ]
    scripted.script = [calls(*[("run_tests", {"command": line}) for line in lines]), answer()]
    driven = await drive(repo, scripted, reviewer=lambda ws: ScriptedReviewer(ws, confirms=[True]))
    assert [r.summary for r in driven.run.reviewer.requests] == ["pytest; touch pwned-glued"]
    results = results_read(scripted)
    assert results[0]["data"]["argv"] == ["pytest", "-q", ";", "touch", "pwned-semicolon"]
    assert results[4]["data"]["argv"][-2:] == ["$(touch", "pwned-subst)"]
    for result in results:
        assert result["success"] is False, result
    # pytest ran and refused the stray arguments: the model reads that as an error, not a pass
    assert results[0]["error"].startswith("tests did not run: "), results[0]
    assert "file or directory not found: ;" in results[0]["error"], results[0]
    assert "not found" in results[-1]["error"] or "command not found" in json.dumps(results[-1])
    assert sorted(p.name for p in repo.iterdir() if p.name.startswith("pwned")) == []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie is dead, only not yet reaped by init


async def _all_gone(pids: list[int], within: float) -> list[int]:
    """The pids still alive after waiting up to `within` seconds (init may reap them late)."""
    deadline = time.monotonic() + within
    alive = [p for p in pids if _alive(p)]
    while alive and time.monotonic() < deadline:  # noqa: ASYNC110 - polling /proc, not an event
        await asyncio.sleep(0.05)
        alive = [p for p in pids if _alive(p)]
    return alive


async def test_timeout_kills_the_whole_process_group(repo: Path, scripted: ScriptedModel) -> None:
    code = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "open('pids.txt', 'w').write(f'{os.getpid()} {child.pid}')\n"
        "time.sleep(120)\n"
    )
    scripted.script = [tool_call("run_tests", command=_python(code)), answer()]
    started = time.monotonic()
    await drive(
        repo,
        scripted,
        # Outside the sandbox: the pids the child writes must be the host's to be checked here
        # (tests/security checks the sandboxed run's tree ends with it).
        overrides={**ALLOW_PYTHON, "limits": {"command_timeout_seconds": 1.5}, "sandbox": "off"},
    )
    assert time.monotonic() - started < 30
    (result,) = results_read(scripted)
    assert result["success"] is False
    assert result["data"]["timed_out"] is True
    assert "timed out" in result["error"]
    pids = [int(p) for p in (repo / "pids.txt").read_text().split()]
    assert await _all_gone(pids, within=5.0) == []


async def test_output_is_capped_and_the_model_sees_the_tail(
    repo: Path, scripted: ScriptedModel
) -> None:
    code = (
        "import sys\n"
        "sys.stdout.write('HEAD-START\\n')\n"
        "for i in range(5000): sys.stdout.write(f'line {i:05d} ' + 'x' * 60 + '\\n')\n"
        "sys.stdout.write('TAIL-SUMMARY: 5000 lines\\n')\n"
    )
    total = (
        len("HEAD-START\n")
        + 5000 * len("line 00000 " + "x" * 60 + "\n")
        + len("TAIL-SUMMARY: 5000 lines\n")
    )
    scripted.script = [tool_call("run_tests", command=_python(code)), answer()]
    driven = await drive(
        repo,
        scripted,
        overrides={**ALLOW_PYTHON, "tool_calling": {"retention": {"max_output_bytes": 3000}}},
    )
    (result,) = results_read(scripted)
    assert result["success"] is True, result
    assert result["output_truncated"] is True
    assert result["output_size_bytes"] == total
    output = result["data"]["output"]
    assert output.rstrip().endswith("TAIL-SUMMARY: 5000 lines")
    assert output.startswith("HEAD-START")
    assert "omitted" in output
    sent = next(m["content"] for m in scripted.requests[-1]["messages"] if m.get("role") == "tool")
    assert len(sent.encode()) <= 3000
    executed = driven.of_type("tool_call_executed")[0]
    assert executed["output_truncated"] is True and executed["output_size_bytes"] == total


async def test_pytest_output_keeps_its_summary_for_the_model(
    repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_pytest(monkeypatch)
    (repo / "test_many.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('n', range(1500))\n"
        "def test_n(n):\n    assert n >= 0\n"
    )
    scripted.script = [tool_call("run_tests", command="pytest -v -p no:cacheprovider"), answer()]
    await drive(
        repo, scripted, overrides={"tool_calling": {"retention": {"max_output_bytes": 4000}}}
    )
    (result,) = results_read(scripted)
    assert result["success"] is True, result
    assert result["data"]["summary"]["passed"] == 1500
    assert result["output_truncated"] is True
    assert "1500 passed" in result["data"]["output"][-300:]
    assert os.path.exists(repo / "test_many.py")


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q --basetemp=victim",
        "pytest -q --basetemp ../outside",
        "python -m pytest --junitxml=../outside/keep.txt",
        "pytest --log-file=victim/data.txt",
        "pytest -o cache_dir=../outside",
        "pytest -ocache_dir=../outside",
    ],
)
async def test_pytest_options_that_write_where_they_are_told_need_a_person(
    repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    # `--basetemp DIR` deletes DIR before the run; others write files at a path of the
    # caller's choosing. The allow-list covers pytest, not what these arguments do.
    fast_pytest(monkeypatch)
    (repo / "victim").mkdir()
    (repo / "victim" / "data.txt").write_text("precious\n")
    # pytest empties the --basetemp folder as soon as a test asks for tmp_path
    (repo / "test_tmp.py").write_text("def test_tmp(tmp_path):\n    assert tmp_path.is_dir()\n")
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious\n")
    toolgate_dir(repo)
    before = snapshot(repo, outside)
    scripted.script = [tool_call("run_tests", command=command), answer()]
    await drive(repo, scripted, reviewer=AutoReviewer)
    assert snapshot(repo, outside) == before
    (result,) = results_read(scripted)
    assert result["success"] is False
    # Inside the workspace the person is asked; outside, the path is refused outright.
    assert "allow-list" in result["error"] or "outside the workspace" in result["error"], result
