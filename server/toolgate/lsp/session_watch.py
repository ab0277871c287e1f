"""`toolgate/sessionChanged`: a session changed by another process, said to the editor.

A terminal's `toolgate chat` or `toolgate undo`, or another editor, may add to a session that
this editor shows. The server asks the client to watch the session files for it (dynamic
registration of `workspace/didChangeWatchedFiles`), tells its own writes from the others' by
the file's stamp, and names each session someone else changed, so the editor can draw it
again. A client that cannot watch files for the server gets no such notification.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from toolgate.lsp.convert import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from toolgate.lsp.state import ToolgateServer

log = logging.getLogger(__name__)

SESSION_CHANGED = "toolgate/sessionChanged"
SESSIONS_GLOB = ".toolgate/sessions/*.jsonl"
# For clients without relative patterns (LSP 3.17): any folder's, narrowed down on arrival.
SESSION_FILES = "**/" + SESSIONS_GLOB
_REGISTRATION = "toolgate-session-files"


def register(server: ToolgateServer) -> None:
    """Take the client's reports of changed session files."""

    # `ls` is typed Any as in lsp/undo.py: pygls resolves the hints at run time.
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: Any, params: types.DidChangeWatchedFilesParams) -> None:
        """Say `toolgate/sessionChanged` for each session another process changed."""
        _report(ls, params)


async def watch_sessions(ls: ToolgateServer) -> None:
    """Ask the client to watch the session files, where it can (after `initialized`)."""
    capabilities = ls.client_capabilities.workspace
    watched = capabilities.did_change_watched_files if capabilities else None
    if ls.root is None or not (watched and watched.dynamic_registration):
        return
    # A pattern relative to the workspace lets the client watch one folder, not the tree.
    pattern: types.GlobPattern = (
        types.RelativePattern(base_uri=path_to_uri(ls.root), pattern=SESSIONS_GLOB)
        if watched.relative_pattern_support
        else SESSION_FILES
    )
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=pattern)]
    )
    registration = types.Registration(
        id=_REGISTRATION,
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )
    try:
        await ls.client_register_capability_async(
            types.RegistrationParams(registrations=[registration])
        )
    except Exception as exc:  # the editor still works; it only draws outside changes later
        log.warning("the client did not watch the session files: %s", exc)


def _report(ls: ToolgateServer, params: types.DidChangeWatchedFilesParams) -> None:
    if ls.root is None:
        return
    paths: list[Path] = []
    for change in params.changes:
        path = uri_to_path(change.uri)
        if path is None:
            continue
        try:  # named as the store names it: the file itself may be gone
            paths.append(path.parent.resolve() / path.name)
        except (OSError, RuntimeError):
            continue
    for session_id, deleted in ls.service.changed_elsewhere(paths):
        ls.notify(SESSION_CHANGED, {"sessionId": session_id, "deleted": deleted})
