"""`SessionService.undo`: the one undo every front end does; it says only how to ask and apply."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.engine.helpers import ask_in_session
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.checkpoints import Checkpoint, run_ids
from toolgate.agent.undo import UndoPlan
from toolgate.config import load_config
from toolgate.conversation.history import transcript
from toolgate.session import SessionBusy, SessionService
from toolgate.workspace import Workspace


async def _rename(service: SessionService, scripted: ScriptedModel, repo: Path) -> tuple[str, str]:
    """A turn whose run changes README.md; its session and run."""
    scripted.script = [
        tool_call("edit_file", path="README.md", search="Tiny", replace="Small"),
        {"content": "Renamed it."},
    ]
    session_id, outcome = await ask_in_session(service, scripted, repo, "Rename it.", None)
    assert outcome.status == "completed"
    assert (repo / "README.md").read_text() == "# Small project\n"
    return session_id, outcome.run_id


def _kept_undos(service: SessionService, session_id: str) -> list[str]:
    loaded = service.store.open(session_id).load(service.root)
    return [str(e["runId"]) for e in transcript(loaded) if str(e.get("runId", "")).startswith("u-")]


async def test_an_apply_that_fails_leaves_no_undo_behind(
    repo: Path, scripted: ScriptedModel
) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    session_id, run_id = await _rename(service, scripted, repo)

    async def refused(workspace: Workspace, plan: UndoPlan) -> None:
        raise RuntimeError("the editor refused the edit")

    with pytest.raises(RuntimeError, match="refused the edit"):
        await service.undo(apply=refused)
    assert run_ids(repo) == [run_id]  # no record of an undo that did not happen
    assert Checkpoint.load(repo, run_id).undone_by is None
    assert _kept_undos(service, session_id) == []
    assert (repo / "README.md").read_text() == "# Small project\n"


async def test_a_declined_undo_changes_nothing(repo: Path, scripted: ScriptedModel) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    _, run_id = await _rename(service, scripted, repo)
    asked: list[str] = []

    async def no(plan: UndoPlan) -> bool:
        asked.append(plan.run_id)
        return False

    done = await service.undo(ask=no)
    assert asked == [run_id] and done.declined and done.undo_run_id is None
    assert (repo / "README.md").read_text() == "# Small project\n"
    assert run_ids(repo) == [run_id]


async def test_an_undo_is_kept_in_the_run_s_session_unless_one_is_named(
    repo: Path, scripted: ScriptedModel
) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    session_id, run_id = await _rename(service, scripted, repo)
    other = service.new_session("elsewhere")  # now the current session: not where it belongs

    done = await service.undo()
    assert (repo / "README.md").read_text() == "# Tiny project\n"
    assert done.session_id == session_id and done.undo_run_id is not None
    assert _kept_undos(service, session_id) == [done.undo_run_id]
    assert Checkpoint.load(repo, run_id).undone_by == done.undo_run_id

    redo = await service.undo(done.undo_run_id, session_id=other)  # the undo undone: a redo
    assert (repo / "README.md").read_text() == "# Small project\n"
    assert redo.session_id == other and _kept_undos(service, other) == [redo.undo_run_id]
    assert Checkpoint.load(repo, run_id).undone_by is None


async def test_the_editor_s_unsaved_text_is_what_a_redo_brings_back(
    repo: Path, scripted: ScriptedModel
) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    await _rename(service, scripted, repo)
    # The person has typed on in the editor since the run; the undo is forced over it.
    unsaved = {(repo / "README.md").resolve(): "# Small project\n\nTyped since.\n"}

    done = await service.undo(force=True, buffers=lambda: unsaved)
    assert (repo / "README.md").read_text() == "# Tiny project\n"
    assert done.undo_run_id is not None
    record = Checkpoint.load(repo, done.undo_run_id)
    kept = record.before_bytes(record.files["README.md"])
    assert kept == b"# Small project\n\nTyped since.\n"


async def test_no_undo_while_a_turn_is_changing_files(repo: Path, scripted: ScriptedModel) -> None:
    service = SessionService(repo, lambda: load_config(repo))
    await _rename(service, scripted, repo)
    claim = service.claim(new=True)
    with pytest.raises(SessionBusy, match="changing files"):
        await service.undo()
    assert (await service.undo(dry_run=True)).plan.changes  # looking is fine
    service.release(claim)
    assert (await service.undo()).undo_run_id is not None
