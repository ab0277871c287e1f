"""`toolgate.undoRun`: a run's checkpoint put back through `workspace/applyEdit`.

The restored text arrives in the editor as one workspace edit, so the person's own undo
takes the undo back too; files the run created are deleted in the same edit. Where the editor
saves, the saved files are then given their exact bytes (encoding, byte-order mark, newlines)
from the checkpoint.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from toolgate.lsp.arguments import UndoRunArguments
from toolgate.lsp.convert import path_to_uri, whole_text_range

if TYPE_CHECKING:
    from toolgate.agent.undo import UndoPlan
    from toolgate.lsp.state import ToolgateServer
    from toolgate.workspace import Workspace


def register(server: ToolgateServer) -> None:
    """Add `toolgate.undoRun` to the language server."""

    # `ls` is typed Any as in lsp/planning.py: pygls resolves the hints at run time.
    @server.command("toolgate.undoRun")
    async def undo_run(ls: Any, args: UndoRunArguments) -> dict[str, Any]:
        """`[{"runId"?, "dryRun"?, "force"?}]` → what was (or would be) restored."""
        return await _undo(ls, args)


async def _undo(ls: ToolgateServer, args: UndoRunArguments) -> dict[str, Any]:
    from toolgate.agent.checkpoints import CheckpointError
    from toolgate.agent.undo import begin_undo, finish_undo, plan_undo
    from toolgate.workspace import Workspace

    root = ls.workspace_root()
    if ls.run_task is not None and not ls.run_task.done() and not args.dry_run:
        raise JsonRpcInvalidParams("a run is changing files now; cancel it or wait, then undo")
    workspace = Workspace(root, buffers=ls.buffers)
    try:
        plan = plan_undo(workspace, args.run_id, force=args.force)
    except CheckpointError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    payload: dict[str, Any] = plan.to_dict()
    payload["dryRun"] = args.dry_run
    if args.dry_run or not plan.changes:
        return payload
    record = begin_undo(workspace, plan)
    try:
        applied = await _apply(ls, workspace, plan)
    except Exception:
        shutil.rmtree(record.folder, ignore_errors=True)
        raise
    if applied is not None:
        # Nothing changed: the undo leaves no record of its own.
        shutil.rmtree(record.folder, ignore_errors=True)
        raise JsonRpcInvalidParams(f"the editor did not apply the undo: {applied}")
    finish_undo(workspace, plan, record)
    payload["undoRunId"] = record.run_id
    _keep_in_conversation(ls, args.session_id, record.run_id, plan)
    return payload


def _keep_in_conversation(
    ls: ToolgateServer, session_id: str | None, undo_run_id: str, plan: UndoPlan
) -> None:
    """The undo joins the conversation as a run of its own, which can itself be undone."""
    from toolgate.conversation.marks import undo_record
    from toolgate.conversation.store import SessionError

    record = undo_record(undo_run_id, plan.run_id, [item.path for item in plan.changes])
    try:
        ls.service.mark(session_id, record)
    except (SessionError, OSError) as exc:
        ls.log(f"could not keep the undo in the conversation: {exc}")


async def _apply(ls: ToolgateServer, workspace: Workspace, plan: UndoPlan) -> str | None:
    """Send the undo as one edit (or write disk for a client without applyEdit); None when done."""
    from toolgate.agent.undo import restore_on_disk
    from toolgate.workspace.files import atomic_write_bytes

    if not ls.supports_apply_edit():
        restore_on_disk(workspace, plan.changes)
        return None
    caps = ls._workspace_edit_caps()
    deletes = bool(caps and types.ResourceOperationKind.Delete in (caps.resource_operations or []))
    changes: list[Any] = []
    by_hand: list[Any] = []  # files undone on disk: binary text, or deletes the client cannot do
    restored: list[tuple[Any, str, bytes]] = []
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
        restored.append((real, uri, item.before))
    if changes:
        result = await ls.apply_edit(
            types.WorkspaceEdit(document_changes=changes), f"Toolgate: undo run {plan.run_id}"
        )
        if not result.applied:
            return result.failure_reason or "the edit was refused"
    restore_on_disk(workspace, by_hand)
    reviewer = ls.reviewer
    saved = await reviewer.ask_to_save([uri for _, uri, _ in restored]) if reviewer else set()
    for real, uri, before in restored:
        # A saved file, or one no editor holds, gets its exact bytes back; an open file the
        # editor did not save keeps the restored text in its buffer, where its undo works.
        if uri in saved or ls.open_text(uri) is None:
            atomic_write_bytes(real, before)
    return None
