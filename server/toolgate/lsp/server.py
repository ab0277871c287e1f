"""The Toolgate language server: commands, code actions, proposals, diagnostics, progress.

Handlers stay thin: they translate LSP to engine calls (`toolgate.session`) and back
(`toolgate.lsp.convert`). The engine never imports pygls.
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgate.lsp.codecache import attrs_code_cache

with attrs_code_cache():
    # Most of the start-up is lsprotocol creating its attrs classes: reuse their compiled code.
    from lsprotocol import types
    from pygls.exceptions import JsonRpcInvalidParams

from toolgate import __version__
from toolgate.agent.redact import Redactor
from toolgate.lsp.actions import failure_actions, proposal_actions, selection_action
from toolgate.lsp.arguments import (
    EDIT_SELECTION_NEEDS,
    AcceptArguments,
    ApprovalModeArguments,
    AskArguments,
    CancelArguments,
    EditSelectionArguments,
    FixFailureArguments,
    ListSessionsArguments,
    NewSessionArguments,
    NoArguments,
    RejectArguments,
    RenameSessionArguments,
    ReportDiagnosticsArguments,
    RunCommandArguments,
    RunTestsArguments,
    SessionArguments,
)
from toolgate.lsp.code_review import register as register_code_review
from toolgate.lsp.code_review import review_actions
from toolgate.lsp.convert import path_to_uri, uri_to_path
from toolgate.lsp.planning import plan_actions
from toolgate.lsp.planning import register as register_planning
from toolgate.lsp.session_watch import register as register_session_watch
from toolgate.lsp.session_watch import watch_sessions
from toolgate.lsp.settings import SettingsError, parse_settings
from toolgate.lsp.setup import register as register_setup
from toolgate.lsp.state import ToolgateServer
from toolgate.lsp.undo import register as register_undo

if TYPE_CHECKING:
    # The engine is imported when a run (or a review) first needs it, so that the server
    # answers `initialize` after loading little more than pygls.
    from toolgate.lsp.reviewer import LspReviewer
    from toolgate.session import SessionService

log = logging.getLogger(__name__)


server = ToolgateServer()
register_planning(server)
register_setup(server)
register_undo(server)
register_session_watch(server)
register_code_review(server)


def _relative(ls: ToolgateServer, uri: str | None, *, name: str = "uri") -> str | None:
    """The workspace-relative path of a file URI; None when absent, another scheme or a bad path.

    A file outside the workspace is the client's error (-32602), named by `name`.
    """
    path = uri_to_path(uri) if uri else None
    if path is None:
        return None
    try:
        return Path(path).resolve().relative_to(ls.workspace_root()).as_posix()
    except (ValueError, OSError):
        raise JsonRpcInvalidParams(f"{name} is outside the workspace") from None


@server.feature(types.INITIALIZED)
async def initialized(ls: ToolgateServer, params: types.InitializedParams) -> None:
    """Log which workspace the server serves; ask the client to watch the session files."""
    ls.log(f"Toolgate {__version__} serving {ls.root}")
    await watch_sessions(ls)


@server.feature(types.INITIALIZE)
def initialize(ls: ToolgateServer, params: types.InitializeParams) -> None:
    """Read the workspace folder and the editor's settings."""
    folder = None
    if params.workspace_folders:
        folder = uri_to_path(params.workspace_folders[0].uri)
    elif params.root_uri:
        folder = uri_to_path(params.root_uri)
    elif params.root_path and "\0" not in params.root_path:
        folder = Path(params.root_path)
    if folder is not None:
        try:
            ls.root = Path(folder).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            ls.log(f"cannot serve the workspace folder {folder}: {exc}", types.MessageType.Error)
    try:
        ls.editor = parse_settings(params.initialization_options)
    except SettingsError as exc:
        ls.log(f"ignoring invalid initializationOptions: {exc}", types.MessageType.Error)
    ls.redactor.add(ls.editor.api_key)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(
    ls: ToolgateServer, params: types.DidChangeConfigurationParams
) -> None:
    """Take new settings (pushed, or pulled when the client sends none)."""
    raw = params.settings
    if not raw:
        try:
            pulled = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="toolgate")])
            )
            raw = {"toolgate": pulled[0]} if pulled else None
        except Exception:
            raw = None
    if raw is None:
        return
    try:
        ls.editor = parse_settings(raw, ls.editor)
    except SettingsError as exc:
        ls.log(f"ignoring invalid settings: {exc}", types.MessageType.Error)
        return
    ls.redactor.add(ls.editor.api_key)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ToolgateServer, params: types.DidChangeTextDocumentParams) -> None:
    """The person typed: proposals on this file may need re-basing."""
    ls.document_changed(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ToolgateServer, params: types.DidOpenTextDocumentParams) -> None:
    """A newly opened buffer may differ from what a proposal was made against."""
    ls.document_changed(params.text_document.uri)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor]
    ),
)
def code_action(ls: ToolgateServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Review actions for pending proposals; "Ask agent to fix" on failures."""
    uri = params.text_document.uri
    actions: list[types.CodeAction] = []
    proposals = [entry.proposal for entry in ls.pending_entries()]
    if proposals and ls.root is not None:
        actions += proposal_actions(proposals, ls.root, uri, params.range)
    path = uri_to_path(uri)
    if path is not None:
        actions += plan_actions(ls, path.resolve())
    actions += review_actions(ls.review_diagnostics.get(uri, []), uri, params.range)
    actions += failure_actions(uri, params.context.diagnostics)
    return actions + selection_action(uri, params.range)


@server.command("toolgate.ask")
async def ask(ls: ToolgateServer, args: AskArguments) -> dict[str, Any]:
    """Start a run: `[{"task": "…", "context"?: {...}}]` → `{"runId"}`."""
    from toolgate.lsp.mentions import pointed_of
    from toolgate.session.mentions import SELECTION, keywords_in

    task = args.task
    context = args.context
    # `@selection` attaches the selection itself (counted and cut with the rest of the
    # context): the line below would only say it twice.
    says_selection = SELECTION in keywords_in(task)
    if context is not None:
        where = _relative(ls, context.uri, name="context uri")
        if (where or context.text) and not says_selection:
            task += f"\n\nContext: the person is looking at {where or 'a file'}"
            if context.range is not None:
                task += f", lines {context.range.start.line + 1}-{context.range.end.line + 1}"
            if context.text:
                task += f"; selected text:\n```\n{context.text[:8000]}\n```"
    pointed = pointed_of(ls.workspace_root(), context)
    return await ls.start_run(task, args.session_id, args.new_session, pointed=pointed)


@server.command("toolgate.editSelection")
async def edit_selection(ls: ToolgateServer, args: EditSelectionArguments) -> dict[str, Any]:
    """A one-turn change of the selected lines: `[{uri, range, instruction}]` → `{runId}`.

    The lines are read as the person sees them: the open buffer, else the file on disk.
    """
    from toolgate.session.selection import selected_lines, selection_task
    from toolgate.workspace import PathRefused, Workspace

    rel = _relative(ls, args.uri)
    if rel is None or args.range is None:
        raise JsonRpcInvalidParams(EDIT_SELECTION_NEEDS)
    try:
        # As read_file reads it: the open buffer, else the file, with the workspace's limits.
        _, text_file = Workspace(ls.workspace_root(), buffers=ls.buffers).read(rel)
    except (PathRefused, OSError) as exc:
        raise JsonRpcInvalidParams(f"cannot read {rel}: {exc}") from None
    text = text_file.text
    start, end = args.range.start, args.range.end
    if (end.line, end.character) < (start.line, start.character):
        start, end = end, start
    lines, last = selected_lines(text, start.line, end.line, end.character)
    if not lines.strip():
        raise JsonRpcInvalidParams(f"the selection in {rel} holds no text")
    task = selection_task(rel, start.line + 1, last + 1, lines, args.instruction)
    return await ls.start_run(task, args.session_id)


@server.command("toolgate.fixFailure")
async def fix_failure(ls: ToolgateServer, args: FixFailureArguments) -> dict[str, Any]:
    """Start a run that fixes one failing test."""
    rel = _relative(ls, args.uri) or "?"
    line = args.line + 1 if args.line is not None else "?"
    task = (
        f"The test {args.test_id[:500]} fails at {rel}:{line} with: {args.message[:8000]}\n"
        "Find the cause, fix it (in the code under test unless the test itself is wrong), "
        "and run the tests again to show it passes."
    )
    return await ls.start_run(task)


def _reviewer(ls: ToolgateServer) -> LspReviewer:
    if ls.reviewer is None:
        raise JsonRpcInvalidParams("no workspace folder is open")
    return ls.reviewer


@server.command("toolgate.acceptProposal")
async def accept_proposal(ls: ToolgateServer, args: AcceptArguments) -> dict[str, Any]:
    """Accept a proposal: `[id]` or `[id, [hunk indexes]]`."""
    from toolgate.lsp.reviewer import ReviewError

    try:
        resolution = await _reviewer(ls).accept(args.proposal_id, args.hunks)
    except ReviewError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    return {
        "id": args.proposal_id,
        "status": resolution.status.value,
        "hunksApplied": resolution.hunks_applied,
        "reason": resolution.reason,
    }


@server.command("toolgate.rejectProposal")
def reject_proposal(ls: ToolgateServer, args: RejectArguments) -> dict[str, Any]:
    """Reject a proposal: `[id, reason?]`."""
    from toolgate.lsp.reviewer import ReviewError

    try:
        resolution = _reviewer(ls).reject(args.proposal_id, args.reason or None)
    except ReviewError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    return {"id": args.proposal_id, "status": resolution.status.value}


@server.command("toolgate.acceptAll")
async def accept_all(ls: ToolgateServer) -> dict[str, Any]:
    """Accept every pending proposal."""
    from toolgate.lsp.reviewer import ReviewError

    accepted = []
    for proposal_id in list(_reviewer(ls).pending):
        try:
            resolution = await _reviewer(ls).accept(proposal_id, None)
        except ReviewError:
            continue
        if resolution.landed:
            accepted.append(proposal_id)
    return {"accepted": accepted}


@server.command("toolgate.listProposals")
def list_proposals(ls: ToolgateServer) -> list[dict[str, Any]]:
    """Pending proposals, as `toolgate/proposal` sends them."""
    from toolgate.lsp.convert import proposal_payload

    reviewer = _reviewer(ls)
    out = []
    for entry in list(reviewer.pending.values()):
        uri = path_to_uri(ls.workspace_root() / entry.proposal.path)
        out.append(proposal_payload(entry.proposal, uri, ls.open_version(uri)))
    return out


@server.command("toolgate.cancel")
def cancel(ls: ToolgateServer, args: CancelArguments) -> dict[str, Any]:
    """Cancel the active run (`[runId?]`)."""
    if args.run_id is not None and args.run_id != ls.active_run_id:
        from toolgate.lsp.reviewer import shown

        raise JsonRpcInvalidParams(f"no active run with id {shown(args.run_id)}")
    return {"cancelled": ls.cancel_run()}


@server.command("toolgate.runTests")
async def run_tests(ls: ToolgateServer, args: RunTestsArguments) -> dict[str, Any]:
    """Run the tests and publish failures as diagnostics: `[{"command"?: "…"}]`."""
    return await ls.run_tests_command(args.command)


@server.command("toolgate.setApprovalMode")
def set_approval_mode(ls: ToolgateServer, args: ApprovalModeArguments) -> dict[str, Any]:
    """Choose the approval mode of the runs to come: `[{"mode"?}]` → `{mode, modes}`.

    Without a mode, says the current one. The `toolgate.approvalMode` setting sets it too.
    """
    from toolgate.session.modes import DESCRIPTIONS, mode_problem

    if args.mode is not None:
        problem = mode_problem(args.mode)
        if problem is not None:
            raise JsonRpcInvalidParams(problem)
        ls.editor.approval_mode = args.mode
    return {"mode": ls.editor.approval_mode, "modes": dict(DESCRIPTIONS)}


@server.command("toolgate.reportDiagnostics")
def report_diagnostics(ls: ToolgateServer, args: ReportDiagnosticsArguments) -> dict[str, Any]:
    """The client reports other language servers' diagnostics for edited files."""
    ls.editor.reports_diagnostics = True
    ls.other_diagnostics[args.uri] = list(args.diagnostics)
    for future in ls._diag_waiters.pop(args.uri, []):
        if not future.done():
            future.set_result(None)
    return {"ok": True}


def _sessions(ls: ToolgateServer) -> SessionService:
    ls.workspace_root()  # a clear error without a workspace folder
    return ls.service


@server.command("toolgate.newSession")
def new_session(ls: ToolgateServer, args: NewSessionArguments) -> dict[str, Any]:
    """Start an empty session; it becomes the current one: `[{"title"?}]` → `{sessionId}`."""
    from toolgate.session import SessionError

    try:
        return {"sessionId": _sessions(ls).new_session(args.title or "")}
    except SessionError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


@server.command("toolgate.customization")
def customization(ls: ToolgateServer, args: NoArguments) -> dict[str, Any]:
    """Rules, skills, prompt commands, hooks and MCP servers found, with sources and trust."""
    from toolgate.config import ConfigError
    from toolgate.session.customization import gather_customization

    root = ls.workspace_root()
    try:
        config = ls.config()
    except ConfigError as exc:
        raise JsonRpcInvalidParams(f"configuration error: {exc}") from None
    return gather_customization(root, config).to_json()


@server.command("toolgate.runCommand")
async def run_command(ls: ToolgateServer, args: RunCommandArguments) -> dict[str, Any]:
    """Run a prompt file's slash command as a turn: `[{"name", "arguments"?}]` → `{runId}`."""
    from toolgate.session.customization import prompt_commands

    name = args.name.removeprefix("/")
    known = prompt_commands(ls.workspace_root())
    if name not in known:
        listed = ", ".join(f"/{n}" for n in sorted(known)) or "none"
        raise JsonRpcInvalidParams(f"no prompt command /{name}; this project has: {listed}")
    return await ls.start_run(
        f"/{name} {args.arguments}".strip(), args.session_id, args.new_session
    )


@server.command("toolgate.listSessions")
def list_sessions(ls: ToolgateServer, args: ListSessionsArguments) -> dict[str, Any]:
    """The workspace's sessions, most recent activity first."""
    return {"sessions": [info.to_dict() for info in _sessions(ls).sessions()]}


@server.command("toolgate.loadSession")
def load_session(ls: ToolgateServer, args: SessionArguments) -> dict[str, Any]:
    """A session's transcript; it becomes the current one."""
    from toolgate.session import SessionError

    try:
        return _sessions(ls).load(args.session_id)
    except SessionError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


@server.command("toolgate.renameSession")
def rename_session(ls: ToolgateServer, args: RenameSessionArguments) -> dict[str, Any]:
    """Give a session a new title."""
    from toolgate.session import SessionError

    try:
        _sessions(ls).rename(args.session_id, args.title)
    except SessionError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    return {"sessionId": args.session_id, "title": " ".join(args.title.split())[:200]}


@server.command("toolgate.deleteSession")
def delete_session(ls: ToolgateServer, args: SessionArguments) -> dict[str, Any]:
    """Delete a session no run is continuing."""
    from toolgate.session import SessionError

    try:
        _sessions(ls).delete(args.session_id)
    except SessionError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    return {"deleted": True}


@server.feature(types.SHUTDOWN)
async def shutdown(ls: ToolgateServer, *args: Any) -> None:
    """Cancel the run and stop the embedded model."""
    ls.cancel_run("the editor is shutting down")
    if ls._service is not None:
        await ls._service.close()


# An API key given as a field, in JSON or in a Python repr: `"apiKey": "…"`, `'api_key': '…'`.
_KEY_FIELD = re.compile(r"""(["']?api_?key["']?\s*[:=]\s*["'])([^"']+)""", re.IGNORECASE)


class RedactingFilter(logging.Filter):
    """Keeps secrets out of every log line, pygls' own dumps of messages included."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message with every secret hidden."""
        try:
            message = record.getMessage()
        except Exception:
            return True
        clean = _KEY_FIELD.sub(r"\1[redacted]", self.redactor.text(message))
        if clean != message:
            record.msg, record.args = clean, None
        return True


def serve(tcp: str | None = None) -> int:
    """Serve over stdio, or TCP with HOST:PORT."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    # pygls logs whole messages (initialize with its apiKey) when the level allows it.
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter(server.redactor))
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            print("toolgate: --tcp needs HOST:PORT", file=sys.stderr)
            return 2
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0
