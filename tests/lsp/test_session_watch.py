"""`toolgate/sessionChanged`: the editor hears of a session another process changed.

A real `toolgate run --session` and `toolgate undo` in a terminal write the session the editor
shows; the editor reports the changed files, as VS Code's watcher does, and the server names
the session for each outside change and never for its own writes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from tests.cli.helpers import toolgate, toolgate_task
from tests.lsp.conftest import start_editor
from tests.lsp.harness import Editor, EditorClient, uri_of
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.lsp.session_watch import SESSION_CHANGED, SESSION_FILES


def _report(editor: Editor, path: Path, kind: types.FileChangeType) -> None:
    """What the editor's watcher sends when a watched file changes."""
    editor.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri_of(path), type=kind)])
    )


async def _ask(editor: Editor, task: str, session_id: str | None = None) -> str:
    args: dict[str, Any] = {"task": task}
    if session_id is not None:
        args["sessionId"] = session_id
    started = await editor.command("toolgate.ask", args)
    run_id = started["runId"]
    await editor.until(
        lambda: any(e["type"] == "run_finished" and e["runId"] == run_id for e in editor.events),
        60,
    )
    return str(started["sessionId"])


async def _watchers(editor: Editor) -> list[Any]:
    client = editor.client
    assert isinstance(client, EditorClient)
    await editor.until(lambda: client.registrations, 10, on=types.WINDOW_LOG_MESSAGE)
    [registration] = client.registrations
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    return [w["globPattern"] for w in registration.register_options["watchers"]]  # plain JSON


async def test_the_server_asks_the_editor_to_watch_the_session_files(
    repo: Path, options: dict[str, Any]
) -> None:
    # A client that takes patterns relative to a folder (VS Code 1.74 on) watches that one.
    editor = await start_editor(repo, options, "visual-studio-code", relative_patterns=True)
    try:
        assert await _watchers(editor) == [
            {"baseUri": uri_of(repo), "pattern": ".toolgate/sessions/*.jsonl"}
        ]
    finally:
        await editor.close()


async def test_a_client_without_relative_patterns_is_given_a_glob(editor: Editor) -> None:
    assert await _watchers(editor) == [SESSION_FILES]


async def test_a_client_that_cannot_watch_for_the_server_is_not_asked(
    repo: Path, options: dict[str, Any], scripted: ScriptedModel
) -> None:
    editor = await start_editor(repo, options, "neovim")
    try:
        scripted.script = [{"content": "Fine."}]
        await _ask(editor, "Hello?")  # long after `initialized`
        assert isinstance(editor.client, EditorClient)
        assert editor.client.registrations == []
    finally:
        await editor.close()


async def test_a_terminal_turn_and_undo_are_named_and_the_servers_own_writes_are_not(
    editor: Editor, repo: Path, scripted: ScriptedModel
) -> None:
    heard = editor.session_changes
    scripted.script = [{"content": "The project is tiny."}]
    session_id = await _ask(editor, "What is this project?")
    file = repo / ".toolgate" / "sessions" / f"{session_id}.jsonl"
    _report(editor, file, types.FileChangeType.Created)  # the server's own writes

    # A terminal continues the session: its model writes a file, approved there.
    scripted.script = [
        tool_call("write_file", path="notes.txt", content="from the terminal\n"),
        {"content": "Wrote notes.txt."},
    ]
    done = await asyncio.to_thread(
        toolgate_task, "run", "Write notes.", repo, scripted, "--session", session_id,
        "--approve", "auto",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (repo / "notes.txt").read_text() == "from the terminal\n"
    _report(editor, file, types.FileChangeType.Changed)
    await editor.until(lambda: heard, 10, on=SESSION_CHANGED)
    # Notifications keep their order: had the server named its own writes, that came first.
    assert heard == [{"sessionId": session_id, "deleted": False}]
    _report(editor, file, types.FileChangeType.Changed)  # the same change, reported again

    undone = await asyncio.to_thread(toolgate, "undo", "--workspace", str(repo))
    assert undone.returncode == 0, undone.stderr
    assert not (repo / "notes.txt").exists()
    _report(editor, file, types.FileChangeType.Changed)
    await editor.until(lambda: len(heard) == 2, 10, on=SESSION_CHANGED)
    assert heard[1] == {"sessionId": session_id, "deleted": False}

    # What the editor draws again holds the terminal's turn and its undo.
    loaded = await editor.command("toolgate.loadSession", {"sessionId": session_id})
    said = [e.get("text") for e in loaded["transcript"] if e["kind"] == "user"]
    assert said == ["What is this project?", "Write notes."]
    runs = [e for e in loaded["transcript"] if e["kind"] == "run"]
    # The terminal's run is undone; the undo is a line of its own, which can be undone in turn.
    assert [r["undo"] for r in runs] == ["none", "undone", "available"], runs
    assert runs[2]["runId"].startswith("u-")

    # The editor's own next turn is not named; a terminal's delete is, as gone.
    scripted.script = [{"content": "Nothing else."}]
    await _ask(editor, "Anything else?", session_id)
    _report(editor, file, types.FileChangeType.Changed)
    deleted = await asyncio.to_thread(
        toolgate, "sessions", "delete", session_id, "--workspace", str(repo)
    )
    assert deleted.returncode == 0, deleted.stderr
    _report(editor, file, types.FileChangeType.Deleted)
    await editor.until(lambda: len(heard) == 3, 10, on=SESSION_CHANGED)
    assert heard[2] == {"sessionId": session_id, "deleted": True}


async def test_files_that_are_not_this_workspaces_sessions_are_not_named(
    editor: Editor, repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    heard = editor.session_changes
    scripted.script = [{"content": "Fine."}]
    session_id = await _ask(editor, "Hello?")
    elsewhere = tmp_path / "other" / ".toolgate" / "sessions" / f"{session_id}.jsonl"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text("{}\n")
    stray = repo / ".toolgate" / "sessions" / "notes.jsonl"
    stray.write_text("{}\n")
    for path in (elsewhere, stray):
        _report(editor, path, types.FileChangeType.Changed)
    # A real outside change last: once it is named, the others would have been before it.
    deleted = await asyncio.to_thread(
        toolgate, "sessions", "delete", session_id, "--workspace", str(repo)
    )
    assert deleted.returncode == 0, deleted.stderr
    gone = repo / ".toolgate" / "sessions" / f"{session_id}.jsonl"
    _report(editor, gone, types.FileChangeType.Deleted)
    await editor.until(lambda: heard, 10, on=SESSION_CHANGED)
    assert heard == [{"sessionId": session_id, "deleted": True}]
