"""`toolgate chat`'s `@` mentions through a pseudo-terminal: Tab completes paths and keywords,
the attached file reaches the model, and what only an editor has is explained, not dropped."""

from __future__ import annotations

from pathlib import Path

from tests.cli.helpers import on_scripted, toolgate_task
from tests.cli.terminal import Terminal
from tests.support.scripted_model import ScriptedModel

PROMPT = "› "


def _user(body: dict) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


def test_tab_completes_mentions_and_the_file_reaches_the_model(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "src").mkdir()
    (repo / "src/app.py").write_text("ANSWER = 42\n")
    (repo / "src/api.py").write_text("")
    scripted.script = [{"content": "It is 42."}, {"content": "No selection here."}]
    with Terminal("chat", *on_scripted(repo, scripted), env={"NO_COLOR": "1"}) as term:
        term.expect(PROMPT)
        term.type("what is in @sr\t")  # the folder
        term.type("app\t")  # then the file inside it
        term.type("?\r")
        term.expect("attached: @src/app.py (file, 1 lines)")
        term.expect("It is 42.")
        term.expect(PROMPT)
        term.type("explain @sel\t")  # a keyword
        term.type(" please\r")
        term.expect("not attached: @selection: no selection: the terminal has no editor")
        term.expect("No selection here.")
        term.expect(PROMPT)
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
    first = _user(scripted.requests[0])
    assert "ANSWER = 42" in first and first.endswith("what is in @src/app.py?")
    second = _user(scripted.requests[1])
    assert second.endswith("explain @selection please")
    assert "the terminal has no editor selection or problems list" in second


def test_run_refuses_a_path_outside_the_workspace(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("the secret")
    scripted.script = [{"content": "Not shown to me."}]
    done = toolgate_task("run", "read @../secret.txt", repo, scripted, "--approve", "auto")
    assert done.returncode == 0, done.stderr
    assert "not attached: @../secret.txt: '..' is not allowed in paths" in done.stderr
    assert "the secret" not in _user(scripted.requests[0])
