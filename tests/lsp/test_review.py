"""Proposals over real stdio: accept, reject with a reason, partial acceptance, open buffers."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from tests.engine.helpers import tool_messages
from tests.lsp.conftest import API_KEY
from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

ORIGINAL = "".join(f"line {i}\n" for i in range(30))


async def test_accept_new_file(editor: Editor, scripted: ScriptedModel, repo: Path) -> None:
    scripted.script = [
        tool_call(
            "write_file",
            path="hello.py",
            content="print('hello')\n",
            _reasoningForCall="the task asks for a greeting",
        ),
        {"content": "Created hello.py."},
    ]
    reply = await editor.command("toolgate.ask", {"task": "create hello.py"})
    assert reply.runId.startswith("r-") if hasattr(reply, "runId") else reply["runId"]
    proposal = await editor.proposal()
    assert proposal["tool"] == "write_file"
    assert proposal["why"] == "the task asks for a greeting"
    assert proposal["uri"] == uri_of(repo / "hello.py")
    assert proposal["isNewFile"] is True
    assert "+print('hello')" in proposal["diff"]
    assert not (repo / "hello.py").exists()  # nothing written before the person says yes
    result = await editor.command("toolgate.acceptProposal", proposal["id"])
    assert _get(result, "status") == "accepted"
    finished = await editor.finished()
    assert finished["status"] == "completed"
    assert (repo / "hello.py").read_text() == "print('hello')\n"
    assert editor.resolved[-1]["status"] == "accepted"
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is True and told["data"]["status"] == "accepted"


async def test_reject_with_reason_reaches_model(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "a.py").write_text(ORIGINAL)
    scripted.script = [
        tool_call("edit_file", path="a.py", search="line 3\n", replace="LINE 3\n"),
        {"content": "OK, leaving it."},
    ]
    await editor.command("toolgate.ask", {"task": "shout line 3"})
    proposal = await editor.proposal()
    await editor.command("toolgate.rejectProposal", proposal["id"], "keep it lowercase")
    assert (await editor.finished())["status"] == "incomplete"  # the change was refused
    assert (repo / "a.py").read_text() == ORIGINAL
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is False
    assert "keep it lowercase" in told["error"]
    assert editor.resolved[-1] == {
        "id": proposal["id"],
        "uri": proposal["uri"],
        "status": "rejected",
        "hunksApplied": [],
        "reason": "keep it lowercase",
    }


async def test_partial_acceptance_in_open_buffer(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "a.py").write_text(ORIGINAL)
    uri = editor.open("a.py")
    new = ORIGINAL.replace("line 2\n", "LINE 2\n").replace("line 25\n", "LINE 25\n")
    scripted.script = [tool_call("write_file", path="a.py", content=new), {"content": "done"}]
    await editor.command("toolgate.ask", {"task": "shout lines 2 and 25"})
    proposal = await editor.proposal()
    assert len(proposal["hunks"]) == 2
    assert proposal["hunks"][1]["range"]["start"]["line"] == 25
    assert proposal["version"] == 1
    result = await editor.command("toolgate.acceptProposal", proposal["id"], [1])
    assert _get(result, "status") == "partially_accepted"
    await editor.finished()
    # the edit went to the open buffer as one minimal edit, with the buffer's version
    change = editor.edits[-1].edit.document_changes[0]
    assert change.text_document.version == 1
    assert len(change.edits) == 1 and change.edits[0].new_text == "LINE 25\n"
    assert change.edits[0].annotation_id  # VS Code advertises change annotations
    assert editor.text(uri) == ORIGINAL.replace("line 25\n", "LINE 25\n")
    told = last_tool_result(scripted.requests[-1])
    assert told["data"]["hunks_applied"] == [1] and told["data"]["hunks_rejected"] == [0]


async def test_read_sees_unsaved_buffer(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "a.py").write_text("on disk\n")
    editor.open("a.py", "unsaved text in the editor\n")
    scripted.script = [tool_call("read_file", path="a.py"), {"content": "read it"}]
    await editor.command("toolgate.ask", {"task": "read a.py"})
    await editor.finished()
    told = last_tool_result(scripted.requests[-1])
    assert told["data"]["content"] == "unsaved text in the editor\n"


async def test_a_read_repeated_after_an_unsaved_edit_sees_the_edit(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "a.py").write_text("on disk\n")
    uri = editor.open("a.py", "first unsaved text\n")
    edited = threading.Event()

    def once_edited(_body: dict[str, Any]) -> dict[str, Any]:
        assert edited.wait(30)
        return tool_call("read_file", path="a.py")

    read = tool_call("read_file", path="a.py")
    scripted.script = [read, once_edited, read, {"content": "read it twice"}]
    await editor.command("toolgate.ask", {"task": "read a.py"})
    await editor.until(lambda: len(scripted.requests) >= 2)
    editor.change(uri, "second unsaved text\n")
    await editor.command("toolgate.listProposals")  # answered after the change is taken
    edited.set()
    assert (await editor.finished())["status"] == "completed"
    first, again, repeated = tool_messages(scripted.requests[-1])
    assert first["data"]["content"] == "first unsaved text\n"
    assert again["data"]["content"] == "second unsaved text\n"
    assert repeated["success"] is False and "nothing has changed" in repeated["error"]


async def test_api_key_never_sent_to_client(editor: Editor, scripted: ScriptedModel) -> None:
    scripted.script = [{"status": 401, "error": f"invalid key {API_KEY}"}]
    await editor.command("toolgate.ask", {"task": "anything"})
    finished = await editor.finished()
    assert finished["status"] == "failed"
    assert "401" in finished["reason"]
    everything = repr(editor.events) + repr(editor.client.log_messages)
    assert API_KEY not in everything


def _get(obj: object, key: str) -> object:
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)
