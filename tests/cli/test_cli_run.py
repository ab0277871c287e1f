"""`toolgate run` in a subprocess: exit codes, JSON lines, the transcript, setup errors."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from tests.cli.helpers import toolgate, toolgate_task
from tests.support.scripted_model import ScriptedModel, tool_call

KEY = "sk-cli-secret-0123456789abcdef"


def _run(repo: Path, scripted: ScriptedModel, *extra: str, **kwargs):  # type: ignore[no-untyped-def]
    return toolgate_task("run", "Do the task.", repo, scripted, *extra, **kwargs)


def test_completed_run_exits_0_and_prints_the_answer(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [tool_call("read_file", path="README.md"), {"content": "The title is Tiny."}]
    done = _run(repo, scripted, "--approve", "deny")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The title is Tiny.\n"
    assert "read_file" in done.stderr and "completed" in done.stderr
    runs = list((repo / ".toolgate" / "runs").glob("*.json"))
    assert len(runs) == 1 and json.loads(runs[0].read_text())["status"] == "completed"


def test_json_lines_on_stdout_and_deny_without_a_terminal(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("write_file", path="new.txt", content="x\n"),
        {"content": "I could not write it."},
    ]
    done = _run(repo, scripted, "--json")  # stdin is not a terminal: --approve deny
    assert done.returncode == 1, done.stderr  # the change was refused: not "completed"
    events = [json.loads(line) for line in done.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert {"tool_call_proposed", "tool_call_executed", "proposal_created"} <= set(types)
    executed = next(e for e in events if e["type"] == "tool_call_executed")
    assert executed["decision"] == "rejected" and "--approve deny" in executed["error"]
    assert events[-1]["status"] == "incomplete"
    assert events[-1]["account"]["proposals"] == {
        "accepted": 0,
        "partly_accepted": 0,
        "rejected": 1,
    }
    assert all(e["run_id"] == events[0]["run_id"] for e in events)
    assert not (repo / "new.txt").exists()
    assert "write_file" in done.stderr  # the transcript still goes to stderr


def test_a_last_change_that_failed_is_not_completed(repo: Path, scripted: ScriptedModel) -> None:
    # A small model's usual ending: its edit did not apply, and it says it is done anyway.
    scripted.script = [
        tool_call("edit_file", path="README.md", search="no such text", replace="x"),
        {"content": "Done: the README is fixed."},
    ]
    done = _run(repo, scripted, "--approve", "auto")
    assert done.returncode == 1, done.stderr
    status = next(line for line in done.stderr.splitlines() if line.startswith("run "))
    assert "incomplete" in status
    assert "did not land (edit_file: `search` text not found in README.md" in status
    # The log tells it the same way: the edit failed; nothing denied it.
    (log,) = (repo / ".toolgate" / "runs").glob("*.json")
    shown = toolgate("runs", "show", log.stem, "--workspace", str(repo)).stdout
    assert "✗ failed — `search` text not found in README.md" in shown
    assert "denied" not in shown


def test_a_failed_change_tried_again_until_it_lands_is_completed(
    repo: Path, scripted: ScriptedModel
) -> None:
    title = (repo / "README.md").read_text().splitlines()[0]
    scripted.script = [
        tool_call("edit_file", path="README.md", search="no such text", replace="x"),
        tool_call("edit_file", path="README.md", search=title, replace=title + "!"),
        {"content": "Done."},
    ]
    done = _run(repo, scripted, "--approve", "auto")
    assert done.returncode == 0, done.stderr
    assert (repo / "README.md").read_text().splitlines()[0] == title + "!"


def test_limit_exits_1(repo: Path, scripted: ScriptedModel) -> None:
    scripted.fallback = tool_call("git_status")
    done = _run(repo, scripted, "--max-steps", "2", "--approve", "deny")
    assert done.returncode == 1
    assert "limit_reached" in done.stderr and "max_steps (2)" in done.stderr


def test_endpoint_down_exits_1_with_one_line(repo: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = toolgate(
        "run",
        "task",
        "--workspace",
        str(repo),
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--model",
        "m",
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if "cannot reach" in line]
    assert len(lines) == 1, done.stderr
    assert done.stdout == ""


def test_auth_failure_exits_1_without_the_key(repo: Path, scripted: ScriptedModel) -> None:
    scripted.fallback = {"status": 401, "error": f"Incorrect API key provided: {KEY}"}
    done = _run(repo, scripted, "--json", env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 1
    assert "refused the API key" in done.stderr
    assert KEY not in done.stderr and KEY not in done.stdout
    assert KEY not in "".join(p.read_text() for p in (repo / ".toolgate" / "runs").glob("*"))


@pytest.mark.parametrize(
    ("setup", "args", "expected"),
    [
        ("unknown-key", [], "limits.max_stepz"),
        ("wrong-type", [], "tool_calling.mode"),
        ("", ["--profile", "nope"], "unknown profile 'nope'"),
        ("", ["--approve", "maybe"], "invalid choice"),
        ("", ["--max-steps", "0"], "limits.max_steps"),
    ],
    ids=["unknown-key", "wrong-type", "unknown-profile", "bad-flag", "bad-limit"],
)
def test_usage_and_configuration_errors_exit_2(
    repo: Path, scripted: ScriptedModel, setup: str, args: list[str], expected: str
) -> None:
    config = repo / ".toolgate" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    if setup == "unknown-key":
        config.write_text("[limits]\nmax_stepz = 3\n")
    elif setup == "wrong-type":
        config.write_text("[tool_calling]\nmode = 3\n")
    done = _run(repo, scripted, *args)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    if setup:
        assert str(config) in done.stderr
    assert "Traceback" not in done.stderr
    assert scripted.requests == []


def test_missing_workspace_exits_2(tmp_path: Path) -> None:
    done = toolgate("run", "task", "--workspace", str(tmp_path / "nope"), "--base-url", "http://x")
    assert done.returncode == 2 and "not a folder" in done.stderr


def test_no_endpoint_says_how_to_configure_one(repo: Path) -> None:
    # Where the local model runtime is installed, no endpoint would start the embedded model.
    done = toolgate("run", "task", "--workspace", str(repo), without_local_runtime=True)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "--base-url" in lines[0] and "OPENAI_BASE_URL" in lines[0]


def test_workspace_base_url_with_a_key_stops_until_confirmed(
    repo: Path, scripted: ScriptedModel
) -> None:
    config = repo / ".toolgate" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[model]\nbase_url = "{scripted.base_url}"\nname = "scripted-model"\n')
    scripted.fallback = {"content": "hello"}
    blocked = toolgate("run", "task", "--workspace", str(repo), env={"OPENAI_API_KEY": KEY})
    assert blocked.returncode == 2  # a configuration error, as the README says
    assert scripted.base_url in blocked.stderr and "toolgate trust" in blocked.stderr
    assert KEY not in blocked.stderr
    assert scripted.requests == []  # the key never left
    # the person names the URL themselves: it is theirs
    explicit = _run(repo, scripted, env={"OPENAI_API_KEY": KEY})
    assert explicit.returncode == 0, explicit.stderr
    assert explicit.stdout == "hello\n"
    # or confirms the workspace's once
    assert toolgate("trust", "--workspace", str(repo), "--yes").returncode == 0
    confirmed = toolgate("run", "task", "--workspace", str(repo), env={"OPENAI_API_KEY": KEY})
    assert confirmed.returncode == 0, confirmed.stderr
