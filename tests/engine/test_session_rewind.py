"""`SessionService.rewind`: a session taken back to a turn (code, conversation or both), and back.

Real git in a temporary repository and the real client against the scripted model: each turn's
run changes files through the gate, the rewind puts them back from the checkpoints, and the
next request the model gets shows what it still sees.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import ask_in_session
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.checkpoints import Checkpoint
from toolgate.config import load_config
from toolgate.session import RewindError, SessionBusy, SessionService


async def _three_turns(service: SessionService, scripted: ScriptedModel, repo: Path) -> str:
    """Turn 1 renames the project, turn 2 adds notes.py, turn 3 edits README.md again."""
    scripted.script = [
        tool_call("edit_file", path="README.md", search="Tiny", replace="Small"),
        {"content": "Renamed it."},
    ]
    session_id, outcome = await ask_in_session(service, scripted, repo, "Rename it.", None)
    assert outcome.status == "completed"
    for task, call in (
        ("Add notes.", tool_call("write_file", path="notes.py", content="NOTES = 1\n")),
        ("Say more.", tool_call("edit_file", path="README.md", search="project", replace="app")),
    ):
        scripted.script = [call, {"content": f"Done: {task}"}]
        _, outcome = await ask_in_session(service, scripted, repo, task, session_id)
        assert outcome.status == "completed"
    assert (repo / "README.md").read_text() == "# Small app\n"
    assert (repo / "notes.py").is_file()
    return session_id


async def _next_request(
    service: SessionService, scripted: ScriptedModel, repo: Path, session_id: str
) -> str:
    """Another turn of the session: every word of the first request the model got for it."""
    scripted.script = [{"content": "Noted."}]
    before = len(scripted.requests)
    _, outcome = await ask_in_session(service, scripted, repo, "What now?", session_id)
    assert outcome.status == "completed"
    return json.dumps(scripted.requests[before]["messages"])


def _transcript(service: SessionService, session_id: str) -> list[dict[str, Any]]:
    transcript: list[dict[str, Any]] = service.load(session_id)["transcript"]
    return transcript


async def test_both_put_the_later_runs_files_back_and_the_model_forgets_their_turns(
    repo: Path, scripted: ScriptedModel
) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    session_id = await _three_turns(service, scripted, repo)

    done = await service.rewind(session_id, 1, "both")
    assert (repo / "README.md").read_text() == "# Small project\n"  # as turn 1 left it
    assert not (repo / "notes.py").exists()
    assert done.turns == [2, 3] and len(done.runs) == 2 and len(done.undos) == 2
    assert done.left_alone == []

    entries = _transcript(service, session_id)
    users = [e for e in entries if e["kind"] == "user"]
    assert [(u["turn"], bool(u.get("rewound"))) for u in users] == [
        (1, False),
        (2, True),
        (3, True),
    ]
    rewinds = [e for e in entries if e["kind"] == "rewind"]
    assert len(rewinds) == 1 and rewinds[0]["toTurn"] == 1 and not rewinds[0]["undone"]
    listed = {info.id: info for info in service.sessions()}
    assert listed[session_id].turns == 3 and listed[session_id].rewound == 2

    sent = await _next_request(service, scripted, repo, session_id)
    assert "Rename it." in sent
    assert "Add notes." not in sent and "Say more." not in sent


async def test_a_rewind_taken_back_brings_the_files_and_the_turns_back(
    repo: Path, scripted: ScriptedModel
) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    session_id = await _three_turns(service, scripted, repo)
    done = await service.rewind(session_id, 1)
    assert (repo / "README.md").read_text() == "# Small project\n"

    back = await service.undo_rewind(session_id)
    assert back.rewind_id == done.rewind_id and back.taken_back
    assert (repo / "README.md").read_text() == "# Small app\n"
    assert (repo / "notes.py").read_text() == "NOTES = 1\n"
    for run_id in done.runs:  # each run's changes are in effect again, undoable
        assert Checkpoint.load(repo, run_id).undone_by is None
    users = [e for e in _transcript(service, session_id) if e["kind"] == "user"]
    assert not any(u.get("rewound") for u in users)
    sent = await _next_request(service, scripted, repo, session_id)
    assert "Add notes." in sent and "Say more." in sent

    with pytest.raises(RewindError, match="no rewind to take back"):
        await service.undo_rewind(session_id)


async def test_the_person_s_later_edit_is_left_alone_and_named(
    repo: Path, scripted: ScriptedModel
) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    session_id = await _three_turns(service, scripted, repo)
    (repo / "README.md").write_text("# Small app\n\nMy own words.\n")

    done = await service.rewind(session_id, 1, "code")
    assert done.left_alone == ["README.md"]
    assert (repo / "README.md").read_text() == "# Small app\n\nMy own words.\n"
    assert not (repo / "notes.py").exists()  # what nobody touched since is put back
    assert done.turns == []  # the code alone: the model still sees every turn
    sent = await _next_request(service, scripted, repo, session_id)
    assert "Add notes." in sent and "Say more." in sent
    assert "undid the changes of turn 2" in sent  # told, as after any undo


async def test_the_conversation_alone_keeps_the_files_and_cannot_come_back_once_it_goes_on(
    repo: Path, scripted: ScriptedModel
) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    session_id = await _three_turns(service, scripted, repo)

    done = await service.rewind(session_id, 2, "conversation")
    assert done.turns == [3] and done.runs == []
    assert (repo / "README.md").read_text() == "# Small app\n"
    sent = await _next_request(service, scripted, repo, session_id)
    assert "Add notes." in sent and "Say more." not in sent

    with pytest.raises(RewindError, match="went on after the rewind"):
        await service.undo_rewind(session_id)
    # A rewound turn is no turn to rewind to; the turn after the rewind is (turn 4).
    with pytest.raises(RewindError, match="turn 3 is not a turn"):
        await service.rewind(session_id, 3)
    again = await service.rewind(session_id, 2, "conversation")
    assert again.turns == [4]


async def test_bad_rewinds_change_nothing(repo: Path, scripted: ScriptedModel) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    session_id = await _three_turns(service, scripted, repo)
    file = service.store.path(session_id)
    before = file.read_bytes()

    with pytest.raises(RewindError, match="last turn"):
        await service.rewind(session_id, 3)
    with pytest.raises(RewindError, match="not a turn"):
        await service.rewind(session_id, 9)
    with pytest.raises(RewindError, match="a rewind is of"):
        await service.rewind(session_id, 1, "everything")
    claim = service.claim(new=True)
    with pytest.raises(SessionBusy):
        await service.rewind(session_id, 1)
    service.release(claim)
    assert file.read_bytes() == before
    assert (repo / "notes.py").is_file()
