"""`toolgate.undoRun`: a run's checkpoint put back through `workspace/applyEdit`.

`toolgate.rewind` takes a session back to a turn (its later runs undone the same way, later
turns out of the conversation) and `toolgate.undoRewind` takes a rewind back.

The restored text arrives in the editor as one workspace edit, so the person's own undo
takes the undo back too; files the run created are deleted in the same edit. Where the editor
saves, the saved files are then given their exact bytes (encoding, byte-order mark, newlines)
from the checkpoint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from toolgate.lsp.arguments import RewindArguments, UndoRewindArguments, UndoRunArguments
from toolgate.lsp.convert import path_to_uri, whole_text_range

if TYPE_CHECKING:
    from toolgate.lsp.state import ToolgateServer
    from toolgate.session.undo import UndoPlan
    from toolgate.workspace import Workspace


def register(server: ToolgateServer) -> None:
    """Add `toolgate.undoRun`, `toolgate.rewind` and `toolgate.undoRewind` to the server."""

    # `ls` is typed Any as in lsp/planning.py: pygls resolves the hints at run time.
    @server.command("toolgate.undoRun")
    async def undo_run(ls: Any, args: UndoRunArguments) -> dict[str, Any]:
        """`[{"runId"?, "dryRun"?, "force"?}]` → what was (or would be) restored."""
        return await _undo(ls, args)

    @server.command("toolgate.rewind")
    async def rewind(ls: Any, args: RewindArguments) -> dict[str, Any]:
        """`[{"turn", "what"?, "sessionId"?}]` → what the rewind took back."""
        return await _rewind(ls, args)

    @server.command("toolgate.undoRewind")
    async def undo_rewind(ls: Any, args: UndoRewindArguments) -> dict[str, Any]:
        """`[{"rewindId"?, "sessionId"?}]` → what taking the rewind back brought back."""
        return await _rewind(ls, args)


async def _rewind(
    ls: ToolgateServer, args: RewindArguments | UndoRewindArguments
) -> dict[str, Any]:
    from toolgate.session import CheckpointError, SessionError

    ls.workspace_root()
    if ls.run_task is not None and not ls.run_task.done():
        raise JsonRpcInvalidParams("a run is going on now; cancel it or wait, then rewind")

    async def apply(workspace: Workspace, plan: UndoPlan) -> None:
        refused = await _apply(ls, workspace, plan)
        if refused is not None:
            raise JsonRpcInvalidParams(f"the editor did not apply the rewind: {refused}")

    try:
        if isinstance(args, RewindArguments):
            done = await ls.service.rewind(
                args.session_id, args.turn, args.what, apply=apply, buffers=ls.buffers
            )
        else:
            done = await ls.service.undo_rewind(
                args.session_id, args.rewind_id, apply=apply, buffers=ls.buffers
            )
    except (CheckpointError, SessionError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    return done.to_dict()


async def _undo(ls: ToolgateServer, args: UndoRunArguments) -> dict[str, Any]:
    from toolgate.session import CheckpointError, SessionError

    ls.workspace_root()  # a clear error without a workspace folder
    if ls.run_task is not None and not ls.run_task.done() and not args.dry_run:
        raise JsonRpcInvalidParams("a run is changing files now; cancel it or wait, then undo")

    async def apply(workspace: Workspace, plan: UndoPlan) -> None:
        refused = await _apply(ls, workspace, plan)
        if refused is not None:  # nothing changed: the service keeps no record of an undo
            raise JsonRpcInvalidParams(f"the editor did not apply the undo: {refused}")

    try:
        done = await ls.service.undo(
            args.run_id,
            force=args.force,
            dry_run=args.dry_run,
            apply=apply,
            buffers=ls.buffers,
            session_id=args.session_id,
        )
    except (CheckpointError, SessionError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    return done.to_dict()


async def _apply(ls: ToolgateServer, workspace: Workspace, plan: UndoPlan) -> str | None:
    """Send the undo as one edit (or write disk for a client without applyEdit); None when done."""
    from toolgate.session.undo import restore_on_disk

    if not ls.supports_apply_edit():
        restore_on_disk(workspace, plan.changes)
        return None
    caps = ls._workspace_edit_caps()
    deletes = bool(caps and types.ResourceOperationKind.Delete in (caps.resource_operations or []))
    changes: list[Any] = []
    by_hand: list[Any] = []  # files undone on disk: binary text, or deletes the client cannot do
    restored: list[tuple[Any, str]] = []  # (the file's undo, its uri)
    for item in plan.changes:
        real = workspace.resolve(item.path, for_write=True)
        uri = path_to_uri(real)
        text = item.before_text
        if item.before is None:
            if deletes:
                changes.append(
                    types.DeleteFile(
                        uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True)
                    )
                )
            else:
                by_hand.append(item)
            continue
        if text is None:
            by_hand.append(item)
            continue
        current = ls.open_text(uri)
        if current is None:
            current = real.read_text("utf-8", errors="replace") if real.is_file() else None
        if current is None:
            changes.append(
                types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True))
            )
            current = ""
        edit = types.TextEdit(range=whole_text_range(current), new_text=text)
        changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=ls.open_version(uri)
                ),
                edits=[edit],
            )
        )
        restored.append((item, uri))
    if changes:
        result = await ls.apply_edit(
            types.WorkspaceEdit(document_changes=changes), f"Toolgate: undo run {plan.run_id}"
        )
        if not result.applied:
            return result.failure_reason or "the edit was refused"
    restore_on_disk(workspace, by_hand)
    reviewer = ls.reviewer
    saved = await reviewer.ask_to_save([uri for _, uri in restored]) if reviewer else set()
    for item, uri in restored:
        # A saved file, or one no editor holds, gets its exact bytes back; an open file the
        # editor did not save keeps the restored text in its buffer, where its undo works.
        if uri in saved or ls.open_text(uri) is None:
            restore_on_disk(workspace, [item])
    return None
