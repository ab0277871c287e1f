"""The session file: complete lines, a torn tail ignored, anything else refused untouched."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolgate.config import Config
from toolgate.conversation.history import Conversation, transcript
from toolgate.conversation.marks import plan_record
from toolgate.conversation.store import (
    SessionBusy,
    SessionError,
    SessionFile,
    SessionLock,
    SessionStore,
)
from toolgate.session import SessionService


def _turn(conversation: Conversation, run_id: str, text: str, answer: str) -> None:
    conversation.begin_turn(run_id, text)
    conversation.add(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"{run_id}-c",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                }
            ],
        }
    )
    conversation.add(
        {"role": "tool", "tool_call_id": f"{run_id}-c", "content": '{"data": "x = 1"}'},
        ("read_file",),
    )
    conversation.record_call(
        run_id,
        {
            "call_id": f"{run_id}-c",
            "name": "read_file",
            "arguments": {"path": "a.py"},
            "status": "ok",
            "summary": "1 line",
        },
    )
    conversation.add({"role": "assistant", "content": answer})
    conversation.end_turn(run_id, "completed", None, answer)


def _session(root: Path) -> tuple[SessionStore, str, Conversation]:
    store = SessionStore(root)
    session_id, file = store.create("first")
    conversation = Conversation.from_loaded(file.load(root), file)
    return store, session_id, conversation


def test_append_and_load_round_trip(tmp_path: Path) -> None:
    store, session_id, conversation = _session(tmp_path)
    _turn(conversation, "r1", "read a.py", "it sets x")
    _turn(conversation, "r2", "and now?", "still x")
    path = store.path(session_id)
    assert path == tmp_path / ".toolgate" / "sessions" / f"{session_id}.jsonl"
    assert all(json.loads(line) for line in path.read_text().splitlines())  # one record a line

    again = Conversation.from_loaded(store.open(session_id).load(tmp_path), None)
    assert again.turns == 2 and again.title == "first"
    assert [e.message for e in again.entries] == [e.message for e in conversation.entries]
    shown = transcript(store.open(session_id).load(tmp_path))
    assert [e["kind"] for e in shown] == ["user", "tool", "assistant", "run"] * 2
    # Each turn and each run's end says when, so a client names the run by its time.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", shown[3].pop("time"))
    assert shown[3] == {"kind": "run", "runId": "r1", "status": "completed", "reason": None}
    assert shown[1] == {
        "kind": "tool",
        "runId": "r1",
        "callId": "r1-c",
        "name": "read_file",
        "arguments": {"path": "a.py"},
        "status": "ok",
        "summary": "1 line",
    }
    assert shown[4].pop("time").endswith("Z")
    assert shown[4] == {"kind": "user", "text": "and now?", "runId": "r2", "turn": 2}


def test_the_runs_the_model_knows_and_was_told_undone_survive_a_reload(tmp_path: Path) -> None:
    store, session_id, conversation = _session(tmp_path)
    _turn(conversation, "r1", "change a.py", "changed")
    conversation.begin_turn("r2", "again", note="[Since your last answer]\n- …", undone=["r1"])
    conversation.end_turn("r2", "completed", None, "ok")

    again = Conversation.from_loaded(store.open(session_id).load(tmp_path), None)
    assert again.runs == [(1, "r1"), (2, "r2")]
    assert again.undone_told == ["r1"]
    assert again.entries[-1].message["content"] == "[Since your last answer]\n- …\n\nagain"
    said = [
        e["text"] for e in transcript(store.open(session_id).load(tmp_path)) if e["kind"] == "user"
    ]
    assert said == ["change a.py", "again"]  # the note is the model's, not the person's words

    # A turn cut short is left out of what the model reads, and so is what it told.
    again.file = store.open(session_id)
    again.begin_turn("r3", "crash", note="[Since your last answer]\n- r2", undone=["r1", "r2"])
    cut = Conversation.from_loaded(store.open(session_id).load(tmp_path), None)
    assert cut.undone_told == ["r1"] and cut.runs[-1] == (3, "r3")

    # Turns set aside are unknown to the model: no news of them is due.
    again.file = store.open(session_id)
    again.set_aside()
    assert again.runs == []
    reloaded = Conversation.from_loaded(store.open(session_id).load(tmp_path), None)
    assert reloaded.runs == [] and reloaded.undone_told == ["r1"]


def test_a_torn_last_line_is_ignored_with_a_notice_and_cut_before_the_next_append(
    tmp_path: Path,
) -> None:
    store, session_id, conversation = _session(tmp_path)
    _turn(conversation, "r1", "read a.py", "it sets x")
    path = store.path(session_id)
    whole = path.read_bytes()
    with open(path, "ab") as handle:  # what a crash in the middle of a write leaves
        handle.write(b'{"t":"msg","turn":2,"m":{"role":"user","cont')

    file = store.open(session_id)
    loaded = file.load(tmp_path)
    assert len(loaded.notices) == 1 and "incomplete last line" in loaded.notices[0]
    assert str(path) in loaded.notices[0]
    resumed = Conversation.from_loaded(loaded, file)
    assert resumed.turns == 1

    _turn(resumed, "r2", "again", "done")
    data = path.read_bytes()
    assert data.startswith(whole) and b'"cont\n' not in data and b"cont{" not in data
    final = Conversation.from_loaded(store.open(session_id).load(tmp_path), None)
    assert final.turns == 2 and final.entries[-1].message["content"] == "done"


def test_a_turn_cut_short_by_a_crash_is_left_out_of_the_history(tmp_path: Path) -> None:
    store, session_id, conversation = _session(tmp_path)
    _turn(conversation, "r1", "read a.py", "it sets x")
    conversation.begin_turn("r2", "edit it")
    conversation.add(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c9",
                    "type": "function",
                    "function": {"name": "edit_file", "arguments": "{}"},
                }
            ],
        }
    )
    # no result and no end: the process died here
    loaded = Conversation.from_loaded(store.open(session_id).load(tmp_path), None)
    assert loaded.turns == 2
    assert all(e.turn == 1 for e in loaded.entries)
    assert any("did not finish" in n for n in loaded.notices)


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda lines: [lines[0], b"{not json", *lines[1:]], "line 2 is not valid JSON"),
        (
            lambda lines: [lines[0].replace(b'"version":1', b'"version":7'), *lines[1:]],
            "newer Toolgate",
        ),
        (
            lambda lines: [
                lines[0].replace(b'"workspace":"', b'"workspace":"/elsewhere'),
                *lines[1:],
            ],
            "another workspace",
        ),
        (lambda lines: [b'{"hello": 1}', *lines[1:]], "not a Toolgate session file"),
        (lambda lines: [lines[0], b"[1, 2]", *lines[1:]], "not a JSON object"),
    ],
)
def test_a_damaged_or_foreign_file_is_refused_by_name_and_left_as_it_is(
    tmp_path: Path, damage: object, expected: str
) -> None:
    store, session_id, conversation = _session(tmp_path)
    _turn(conversation, "r1", "read a.py", "it sets x")
    path = store.path(session_id)
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")
    path.write_bytes(b"\n".join(damage(lines)) + b"\n")  # type: ignore[operator]
    before = path.read_bytes()

    service = SessionService(tmp_path, Config)
    with pytest.raises(SessionError) as caught:
        service.claim(session_id)
    assert expected in str(caught.value) and str(path) in str(caught.value)
    with pytest.raises(SessionError):
        service.load(session_id)
    assert path.read_bytes() == before
    assert not store.lock_path(session_id).exists()  # the refused claim holds nothing


def test_unknown_ids_are_clear_errors_and_ids_cannot_name_other_files(tmp_path: Path) -> None:
    service = SessionService(tmp_path, Config)
    with pytest.raises(SessionError, match="unknown session 's-nope'"):
        service.claim("s-nope")
    with pytest.raises(SessionError, match="not a session id"):
        service.load("../../etc/passwd")
    with pytest.raises(SessionError, match="unknown session"):
        service.rename("s-missing", "x")


def test_list_rename_delete(tmp_path: Path) -> None:
    service = SessionService(tmp_path, Config)
    first = service.new_session("alpha")
    second = service.new_session()
    conversation = service.open(second)
    _turn(conversation, "r1", "Add a --verbose flag to cli.py", "done")
    listed = service.sessions()
    assert [s.id for s in listed] == [second, first]  # most recent activity first
    assert listed[0].title == "Add a --verbose flag to cli.py" and listed[0].turns == 1
    assert listed[0].last_activity.endswith("Z") and listed[1].turns == 0

    service.rename(second, "verbose flag")
    assert service.sessions()[0].title == "verbose flag"
    assert service.load(second)["title"] == "verbose flag"

    service.delete(first)
    assert [s.id for s in service.sessions()] == [second]
    with pytest.raises(SessionError, match="unknown session"):
        service.load(first)


def test_a_session_is_continued_by_one_run_at_a_time(tmp_path: Path) -> None:
    service = SessionService(tmp_path, Config)
    claim = service.claim(new=True)
    with pytest.raises(SessionBusy, match=claim.session_id):
        service.claim(claim.session_id)
    with pytest.raises(SessionBusy):
        service.delete(claim.session_id)
    # another process (another editor, a terminal) is refused through the lock file
    other = SessionService(tmp_path, Config)
    with pytest.raises(SessionBusy, match="busy"):
        other.claim(claim.session_id)
    service.release(claim)
    again = other.claim(claim.session_id)
    other.release(again)


def test_records_marked_on_a_session_are_redacted_like_its_turns(tmp_path: Path) -> None:
    key = "sk-live-0123456789abcdef"
    service = SessionService(tmp_path, lambda: Config(api_key=key))
    plan = {"planId": "p-1", "goal": f"rotate {key}", "steps": [{"note": "Bearer abcdefgh12345"}]}
    session_id = service.mark(None, plan_record(plan), create=True)
    assert session_id is not None
    stored = service.store.path(session_id).read_text()
    assert key not in stored and "abcdefgh12345" not in stored
    (entry,) = [e for e in service.load(session_id)["transcript"] if e["kind"] == "plan"]
    assert entry["plan"]["goal"] == "rotate [redacted]"


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id, _ = store.create()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    store.lock_path(session_id).write_text(dead)
    lock = SessionLock(store.lock_path(session_id), session_id)
    lock.acquire()
    assert store.lock_path(session_id).read_text() == str(os.getpid())
    lock.release()
    assert not store.lock_path(session_id).exists()


def test_a_new_file_never_replaces_an_existing_one(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session_id, _ = store.create("kept")
    with pytest.raises(SessionError, match="already exists"):
        store.create("other", session_id=session_id)
    assert SessionFile(store.path(session_id)).load(tmp_path).header["title"] == "kept"


def test_only_changes_made_by_another_store_are_named_each_once(tmp_path: Path) -> None:
    mine, theirs = SessionStore(tmp_path), SessionStore(tmp_path)  # two processes' stores
    session_id, file = mine.create("t")
    path = mine.path(session_id)
    file.append({"t": "title", "title": "mine"})
    assert mine.changed_elsewhere([path]) == []  # its own writes

    theirs.open(session_id).append({"t": "title", "title": "theirs"})
    assert mine.changed_elsewhere([path, path]) == [(session_id, False)]
    assert mine.changed_elsewhere([path]) == []  # named once
    assert theirs.changed_elsewhere([path]) == []

    mine.open(session_id).append({"t": "title", "title": "mine again"})
    assert theirs.changed_elsewhere([path]) == [(session_id, False)]
    theirs.delete(session_id)
    assert mine.changed_elsewhere([path]) == [(session_id, True)]
    assert theirs.changed_elsewhere([path]) == []

    other = tmp_path / "elsewhere" / path.name
    stray = mine.folder / "notes.jsonl"
    assert mine.changed_elsewhere([other, stray, path.with_suffix(".lock")]) == []


def test_a_session_changed_elsewhere_is_said_when_it_is_next_continued(tmp_path: Path) -> None:
    said: list[str] = []
    here, elsewhere = (
        SessionService(tmp_path, Config, notice=said.append),
        SessionService(tmp_path, Config),
    )
    claim = here.claim(new=True)
    session_id = claim.session_id
    _turn(claim.conversation, "r-1", "first", "one")
    here.release(claim)
    here.release(here.claim(session_id))
    here.mark(session_id, plan_record({"planId": "p-1", "goal": "g", "steps": []}))
    here.release(here.claim(session_id))
    assert said == []  # its own turn and its own plan record changed nothing it did not know

    other = elsewhere.claim(session_id)
    _turn(other.conversation, "r-2", "from a terminal", "two")
    elsewhere.release(other)
    again = here.claim(session_id)
    assert said == [
        f"session {session_id} changed elsewhere since it was last used here: 1 turn(s) were "
        "added, which the model sees"
    ]
    assert [e.message["content"] for e in again.conversation.entries][-1] == "two"
    here.release(again)
