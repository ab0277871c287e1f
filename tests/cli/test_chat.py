"""`toolgate chat` through a pseudo-terminal: turns, an approval, Ctrl-C, /new and /load."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.cli.helpers import on_scripted, too_late
from tests.cli.terminal import Terminal
from tests.support.scripted_model import ScriptedModel, tool_call

PROMPT = "› "


def _chat(repo: Path, scripted: ScriptedModel) -> Terminal:
    return Terminal(
        "chat",
        *on_scripted(repo, scripted),
        env={"NO_COLOR": "1"},
    )


def test_a_chat_of_turns_with_an_approval_ctrl_c_new_and_load(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        {"content": "The project is called Tiny."},
        tool_call("write_file", path="name.txt", content="Tiny\n"),
        {"content": "Wrote it."},
        too_late,
        {"content": "Still here."},
        {"content": "Fresh."},
        {"content": "Back in the first one."},
    ]
    term = _chat(repo, scripted)
    try:
        term.expect(PROMPT)
        term.type("What is the project called?\r")
        term.expect("The project is called Tiny.")
        term.expect(PROMPT)
        term.type("Write that name to name.txt\r")
        term.expect("Apply?")
        term.type("y\r")
        term.expect("Wrote it.")
        term.expect(PROMPT)
        assert (repo / "name.txt").read_text() == "Tiny\n"
        term.type("/undo\r")
        term.expect("name.txt: remove")
        term.expect("[y/N]")
        term.type("y\r")
        term.expect(": restored 1 file")
        term.expect(PROMPT)
        assert not (repo / "name.txt").exists()
        # The second turn's request carried the first turn.
        assert "The project is called Tiny." in json.dumps(scripted.requests[1]["messages"])

        term.type("Think slowly\r")
        term.expect("waiting for the model")
        time.sleep(1)
        term.interrupt()
        term.expect("stopping the turn")
        term.expect(PROMPT, timeout=30)
        time.sleep(2.5)  # not a double press
        term.type("Are you there?\r")
        term.expect("Still here.")
        term.expect(PROMPT)

        term.type("/sessions\r")
        listing = term.expect(PROMPT)
        first = next(w for w in listing.split() if w.startswith("s-"))
        term.type("/new\r")
        term.expect(PROMPT)
        term.type("Hello\r")
        term.expect("Fresh.")
        term.expect(PROMPT)
        assert "Tiny" not in json.dumps(scripted.requests[-1]["messages"])
        term.type(f"/load {first}\r")
        term.expect(f"continuing session {first}")
        term.expect(PROMPT)
        term.type("And now?\r")
        term.expect("Back in the first one.")
        term.expect(PROMPT)
        assert "The project is called Tiny." in json.dumps(scripted.requests[-1]["messages"])
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
    finally:
        term.close()


# CPython's readline checks for a signal only when its wait for input is interrupted: a Ctrl-C
# that lands between drawing the prompt and that wait is seen at the next key. A person never
# presses that fast; the test waits as long after each prompt.
SETTLE_SECONDS = 0.5


def test_ctrl_c_twice_at_the_prompt_leaves(repo: Path, scripted: ScriptedModel) -> None:
    term = _chat(repo, scripted)
    try:
        term.expect(PROMPT)
        time.sleep(SETTLE_SECONDS)
        term.interrupt()
        term.expect("Ctrl-C again")
        term.expect(PROMPT)
        time.sleep(SETTLE_SECONDS)
        term.interrupt()
        assert term.wait(timeout=30) == 0
    finally:
        term.close()
