"""`toolgate chat`'s commands, markdown answers and spinner, through a pseudo-terminal."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from tests.cli.helpers import on_scripted, too_late, toolgate, toolgate_task
from tests.cli.terminal import Terminal
from tests.support.scripted_model import ScriptedModel

PROMPT = "› "
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
MARKDOWN_ANSWER = "Here is **the plan**:\n\n- first `step`\n- second step\n"


def _chat(repo: Path, scripted: ScriptedModel, **env: str) -> Terminal:
    return Terminal("chat", *on_scripted(repo, scripted), env={"NO_COLOR": "1", **env})


def test_tests_runs_them_through_the_gate_and_names_the_failures(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "test_calc.py").write_text(
        "def test_one():\n    assert 1 == 1\n\n\ndef test_two():\n    assert 1 == 2\n"
    )
    with _chat(repo, scripted) as term:
        term.expect(PROMPT)
        term.type("/tests\r")
        term.expect("tests: 1 passed, 1 failed, 0 errors, 0 skipped")
        failures = term.expect(PROMPT)
        assert "✗ test_calc.py::test_two (test_calc.py:6)" in failures
        assert "test_one" not in failures
        term.type("/tests rm -rf .\r")
        term.expect("cannot run them:")
        term.expect("not on the allow-list")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
    assert scripted.requests == []  # the person's test run never asks the model
    assert (repo / "test_calc.py").exists()


def test_tests_on_a_terminal_leaves_no_spinner_at_the_prompt(
    repo: Path, scripted: ScriptedModel
) -> None:
    # No model answers the person's own test run: nothing may draw "waiting for" after it.
    (repo / "test_calc.py").write_text("def test_two():\n    assert 1 == 2, 'one\\ntwo'\n")
    with _chat(repo, scripted, TERM="xterm") as term:
        term.expect(PROMPT)
        term.type("/tests\r")
        shown = term.expect("tests: 0 passed, 1 failed")
        shown += term.expect(PROMPT)
        time.sleep(1.5)  # a spinner redraws every 0.1 s
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
        shown += term.seen
    assert "waiting for" not in shown
    assert "\n      assert 1 == 2" in shown.replace("\r", "")  # later lines stay indented


def test_review_prints_the_models_comments_and_changes_nothing(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "README.md").write_text("# Tiny project\n\nIt divides by zero.\n")
    comment = {
        "path": "README.md",
        "line": 3,
        "severity": "warning",
        "message": "say which function",
        "suggestion": "`half()` divides by zero.",
    }
    scripted.script = [{"content": json.dumps({"approved": False, "comments": [comment]})}]
    with _chat(repo, scripted) as term:
        term.expect(PROMPT)
        term.type("/review\r")
        shown = term.expect("review: not approved: 1 warning")
        term.expect(PROMPT)
        term.type("/review staged\r")
        term.expect("no changes staged: nothing to review")
        term.expect(PROMPT)
        term.type("/review everything\r")
        term.expect("/review takes nothing, or `staged`")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
    [request] = scripted.requests  # only the working tree had changes to send
    assert "    3 + It divides by zero." in request["messages"][1]["content"]
    assert (repo / "README.md").read_text() == "# Tiny project\n\nIt divides by zero.\n"
    assert "README.md:3 warning say which function" in shown
    assert "suggested: `half()` divides by zero." in shown


def test_help_model_and_an_unknown_command(repo: Path, scripted: ScriptedModel) -> None:
    with _chat(repo, scripted) as term:
        term.expect(PROMPT)
        term.type("/help\r")
        listing = term.expect(PROMPT)
        for command in (
            "/new",
            "/sessions",
            "/load ID",
            "/undo",
            "/tests",
            "/review",
            "/model",
            "/exit",
        ):
            assert command in listing
        term.type("/model\r")
        term.expect(f"model {scripted.model} at {scripted.base_url}")
        term.expect(PROMPT)
        term.type("/sessions\r")
        term.expect("no sessions in this workspace yet")
        term.expect(PROMPT)
        term.type("/load\r")
        term.expect("/load needs a session id")
        term.expect(PROMPT)
        term.type("/load s-nope\r")
        term.expect("cannot load it")
        term.expect(PROMPT)
        term.type("/undo\r")
        term.expect("nothing to undo")
        term.expect(PROMPT)
        term.type("/frobnicate\r")
        term.expect("unknown command /frobnicate; /help lists them")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
    assert scripted.requests == []


def test_the_answer_is_drawn_as_markdown_on_a_colour_terminal(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": MARKDOWN_ANSWER}]
    with _chat(repo, scripted, TERM="xterm", NO_COLOR="") as term:
        term.expect(PROMPT)
        term.type("Plan it.\r")
        drawn = term.expect("run ")  # the account follows the answer
        plain = ANSI.sub("", drawn)
        assert "the plan" in plain and "**the plan**" not in plain
        assert "`step`" not in plain and "step" in plain
        assert "• first" in plain  # a markdown list item, drawn as a bullet
        assert "\x1b[1m" in drawn  # the bold words are bold
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0


def test_without_colour_the_answer_is_the_models_own_text(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": MARKDOWN_ANSWER}]
    with _chat(repo, scripted, TERM="xterm", NO_COLOR="1") as term:
        term.expect(PROMPT)
        term.type("Plan it.\r")
        term.expect("Here is **the plan**:")
        term.expect("- first `step`")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0


def _slow(body: dict[str, Any]) -> dict[str, Any]:
    time.sleep(2.5)
    return {"content": "Thought about it."}


def test_the_spinner_names_the_model_the_step_and_the_time_waited(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [_slow]
    with _chat(repo, scripted, TERM="xterm") as term:
        term.expect(PROMPT)
        term.type("Think.\r")
        term.expect(f"waiting for {scripted.model} · step 1 · 2 s")
        term.expect("Thought about it.")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0


def test_chat_continues_a_session_and_refuses_an_unknown_one(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": "The title is Tiny project."}, {"content": "Still Tiny."}]
    first = toolgate_task("run", "What is the title?", repo, scripted, "--approve", "deny")
    assert first.returncode == 0, first.stderr
    unknown = toolgate("chat", *on_scripted(repo, scripted), "--session", "s-nope")
    assert unknown.returncode == 2 and "unknown session 's-nope'" in unknown.stderr
    with Terminal(
        "chat", *on_scripted(repo, scripted), "--continue", env={"NO_COLOR": "1"}
    ) as term:
        term.expect(PROMPT)
        term.type("And again?\r")
        term.expect("Still Tiny.")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
    assert "The title is Tiny project." in json.dumps(scripted.requests[-1]["messages"])


def test_ctrl_c_while_the_spinner_draws_stops_the_turn_and_clears_it(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [too_late, {"content": "Back with **more**."}]
    with _chat(repo, scripted, TERM="xterm", NO_COLOR="") as term:
        term.expect(PROMPT)
        term.type("Think slowly.\r")
        term.expect(f"waiting for {scripted.model} · step 1 · 1 s")
        term.interrupt()
        stopped = term.expect("stopping the turn")
        assert stopped.endswith("\r\x1b[K\r\n(")  # the spinner's line was cleared first
        term.expect(PROMPT, timeout=30)
        time.sleep(2.5)  # not a double press
        term.type("Go on.\r")
        answer = ANSI.sub("", term.expect(PROMPT))
        # Frames drawn while it streamed are redrawn over; the last one is the whole answer.
        assert "Back with more." in answer
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0


def test_model_names_what_the_last_turn_ran_on(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [{"content": "Hi."}]
    flags = ["--workspace", str(repo), "--base-url", scripted.base_url]  # no --model
    with Terminal("chat", *flags, env={"NO_COLOR": "1"}) as term:
        term.expect(PROMPT)
        term.type("/model\r")
        term.expect(f"model (the endpoint’s first) at {scripted.base_url}")
        term.expect(PROMPT)
        term.type("Hello.\r")
        term.expect("Hi.")
        term.expect(PROMPT)
        term.type("/model\r")
        term.expect(f"model {scripted.model} at {scripted.base_url} (native tool calling)")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
