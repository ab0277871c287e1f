"""`toolgate run` as a person meets it on a terminal and at the command line."""

from __future__ import annotations

import time
from pathlib import Path

from tests.cli.helpers import toolgate
from tests.cli.terminal import Terminal
from tests.support.scripted_model import ScriptedModel, tool_call


def test_ctrl_c_at_an_approval_prompt_leaves_at_once_with_130(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [tool_call("write_file", path="new.txt", content="x\n")]
    term = Terminal(
        "run",
        "Write it.",
        "--workspace",
        str(repo),
        "--base-url",
        scripted.base_url,
        "--model",
        scripted.model,
    )
    try:
        term.expect("Apply?")
        started = time.monotonic()
        term.interrupt()
        status = term.wait(timeout=30)  # no Enter is ever typed
        assert status == 130, term.seen
        assert time.monotonic() - started < 30
        assert "interrupted" in term.seen
    finally:
        term.close()
    assert not (repo / "new.txt").exists()


def test_bare_toolgate_prints_help_not_an_error() -> None:
    done = toolgate()
    assert done.returncode == 2
    assert "usage: toolgate" in done.stderr and "run" in done.stderr and "error" not in done.stderr


def test_run_help_has_an_example_exit_statuses_and_variables() -> None:
    done = toolgate("run", "--help")
    assert done.returncode == 0
    for text in ("example:", "exit status:", "130", "TOOLGATE_MODEL", "NO_COLOR"):
        assert text in done.stdout


def test_an_empty_task_is_a_usage_error_and_never_reaches_the_model(
    repo: Path, scripted: ScriptedModel
) -> None:
    done = toolgate(
        "run",
        "  ",
        "--workspace",
        str(repo),
        "--base-url",
        scripted.base_url,
        "--model",
        scripted.model,
    )
    assert done.returncode == 2 and "task is empty" in done.stderr
    assert scripted.requests == []


def test_verbose_after_the_subcommand_shows_toolgates_log_not_httpcores(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": "Hello."}]
    done = toolgate(
        "run",
        "Say hello.",
        "--workspace",
        str(repo),
        "--base-url",
        scripted.base_url,
        "--model",
        scripted.model,
        "-v",
    )
    assert done.returncode == 0, done.stderr
    assert "DEBUG toolgate" in done.stderr
    assert "httpcore" not in done.stderr


def test_trust_on_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    done = toolgate("trust", "--workspace", str(tmp_path / "nope"))
    assert done.returncode == 2 and "not a folder" in done.stderr


def test_no_color_turns_colour_off_on_a_terminal(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [tool_call("write_file", path="new.txt", content="x\n")]
    term = Terminal(
        "run",
        "Write it.",
        "--workspace",
        str(repo),
        "--base-url",
        scripted.base_url,
        "--model",
        scripted.model,
        env={"NO_COLOR": "1"},
    )
    try:
        screen = term.expect("Apply?")
        assert "+x" in screen and "\033[" not in screen
    finally:
        term.close()


def test_lsp_says_it_waits_for_a_client_on_a_terminal() -> None:
    term = Terminal("lsp")
    try:
        term.expect("waiting for a client on stdio", timeout=60)
    finally:
        term.close()
