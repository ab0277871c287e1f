"""`/rewind` over ACP with the SDK's client: offered as a command, done outside a run.

The later run's file is written back through the editor's `fs/write_text_file`, the rewind is
taken back, and a rewind of the conversation leaves the later turn out of the next request.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.acp.client import RecordingClient, connect, prompt
from tests.acp.conftest import CALC, FIXED
from tests.support.scripted_model import ScriptedModel, tool_call


def _said(client: RecordingClient, since: int = 0) -> str:
    chunks = client.kinds("agent_message_chunk")[since:]
    return "".join(u.content.text for u in chunks)


async def test_rewind_is_offered_puts_the_code_back_and_forgets_the_later_turn(
    project: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("write_file", path="notes.txt", content="new\n"),
        {"content": "Wrote notes."},
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        {"content": "Fixed add."},
        {"content": "Only the notes, then."},
    ]
    calc = str(project / "calc.py")
    client = RecordingClient(["allow_once", "allow_once"])
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        offered = client.kinds("available_commands_update")[-1].available_commands
        rewind = next(c for c in offered if c.name == "rewind")
        assert rewind.input is not None and "conversation" in rewind.input.root.hint
        await prompt(conn, sid, "Write notes.")
        await prompt(conn, sid, "Fix add.")
        assert (project / "calc.py").read_text() == FIXED

        n = len(client.kinds("agent_message_chunk"))
        listed = await prompt(conn, sid, "/rewind")
        assert listed.stop_reason == "end_turn"
        assert "- 1: Write notes.\n- 2: Fix add." in _said(client, n)

        n = len(client.kinds("agent_message_chunk"))
        done = await prompt(conn, sid, "/rewind 1")
        assert done.stop_reason == "end_turn"
        assert "Rewound to turn 1" in _said(client, n)
        assert (project / "calc.py").read_text() == CALC
        assert client.writes[-1] == (calc, CALC)  # through the editor
        assert (project / "notes.txt").read_text() == "new\n"  # turn 1's change stays

        n = len(client.kinds("agent_message_chunk"))
        await prompt(conn, sid, "/rewind undo")
        assert "Took back the rewind to turn 1" in _said(client, n)
        assert (project / "calc.py").read_text() == FIXED

        n = len(client.kinds("agent_message_chunk"))
        await prompt(conn, sid, "/rewind 1 conversation")
        assert "the model no longer sees turn 2" in _said(client, n)
        assert (project / "calc.py").read_text() == FIXED  # the conversation alone

        n = len(client.kinds("agent_message_chunk"))
        await prompt(conn, sid, "/rewind 7 code")
        assert "Cannot rewind: turn 7 is not a turn" in _said(client, n)

        await prompt(conn, sid, "What did you do?")
    sent = json.dumps(scripted.requests[-1]["messages"])
    assert "Write notes." in sent and "Fix add." not in sent
    assert len(scripted.requests) == 5  # the model was not asked about the commands
