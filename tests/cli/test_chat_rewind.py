"""`/rewind` in `toolgate chat`, through a pseudo-terminal as a person types it.

The later run's files are put back (a file the person changed since is left alone and named),
the rewind is taken back, then the conversation alone is rewound and the next request the
model gets leaves the later turn out.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import on_scripted, toolgate
from tests.cli.terminal import Terminal
from tests.support.scripted_model import ScriptedModel, tool_call

PROMPT = "› "


def test_rewind_the_code_take_it_back_then_rewind_the_conversation(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("write_file", path="a.txt", content="one\n"),
        {"content": "Wrote a."},
        tool_call("write_file", path="b.txt", content="two\n"),
        tool_call("write_file", path="c.txt", content="three\n"),
        {"content": "Wrote b and c."},
        {"content": "Only a, then."},
    ]
    term = Terminal("chat", *on_scripted(repo, scripted), env={"NO_COLOR": "1"})
    try:
        term.expect(PROMPT)
        term.type("/help\r")
        term.expect("/rewind N [code|conversation|both]")
        term.expect(PROMPT)
        term.type("Write a.txt\r")
        term.expect("Apply?")
        term.type("y\r")
        term.expect("Wrote a.")
        term.expect(PROMPT)
        term.type("Write b.txt and c.txt\r")
        term.expect("Apply?")
        term.type("y\r")
        term.expect("Apply?")
        term.type("y\r")
        term.expect("Wrote b and c.")
        term.expect(PROMPT)
        (repo / "c.txt").write_text("three, and mine\n")  # the person's own edit since

        term.type("/rewind\r")
        term.expect("1: Write a.txt")
        term.expect("2: Write b.txt and c.txt")
        term.expect(PROMPT)
        term.type("/rewind 1 code\r")
        term.expect("rewound to turn 1")
        term.expect("left alone, changed since: c.txt")
        term.expect(PROMPT)
        assert not (repo / "b.txt").exists()
        assert (repo / "c.txt").read_text() == "three, and mine\n"
        assert (repo / "a.txt").read_text() == "one\n"

        term.type("/rewind undo\r")
        term.expect("took back the rewind to turn 1")
        term.expect(PROMPT)
        assert (repo / "b.txt").read_text() == "two\n"

        term.type("/rewind 1 conversation\r")
        term.expect("the model no longer sees turn 2")
        term.expect(PROMPT)
        assert (repo / "b.txt").read_text() == "two\n"  # the conversation alone
        term.type("/rewind\r")
        term.expect("2: Write b.txt and c.txt  (rewound)")
        term.expect(PROMPT)
        term.type("/sessions\r")
        term.expect("(1 rewound)")
        term.expect(PROMPT)
        term.type("/rewind 5\r")
        term.expect("cannot rewind: turn 5 is not a turn")
        term.expect(PROMPT)

        term.type("What did you write?\r")
        term.expect("Only a, then.")
        term.expect(PROMPT)
        sent = json.dumps(scripted.requests[-1]["messages"])
        assert "Write a.txt" in sent and "Write b.txt" not in sent
        term.type("/exit\r")
        assert term.wait(timeout=30) == 0
    finally:
        term.close()

    # `toolgate sessions` shows the rewound turn as it was said, marked.
    (listed,) = json.loads(toolgate("sessions", "list", "--json", "--workspace", str(repo)).stdout)
    assert listed["turns"] == 3 and listed["rewound"] == 1
    shown = toolgate("sessions", "show", listed["id"], "--workspace", str(repo)).stdout
    assert "\nyou (turn 1, " in shown
    assert "[rewound] you (turn 2, " in shown and "[rewound] assistant: Wrote b and c." in shown
    assert "(rewound to turn 1; turn 2 taken out of the conversation" in shown
