"""The Toolgate language server: commands, code actions, proposals, diagnostics, progress.

Handlers stay thin: they translate LSP to engine calls (`toolgate.session`) and back
(`toolgate.lsp.convert`). The engine never imports pygls.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgate.lsp.codecache import attrs_code_cache

with attrs_code_cache():
    # Most of the start-up is lsprotocol creating its attrs classes: reuse their compiled code.
    from lsprotocol import types
    from pygls.exceptions import FeatureRequestError, JsonRpcInvalidParams
    from pygls.io_ import StdoutWriter
    from pygls.lsp.server import LanguageServer

from toolgate import __version__
from toolgate.agent.events import (
    NOTICE,
    RUN_FINISHED,
    TOOL_CALL_EXECUTED,
    TOOL_PROGRESS,
    Event,
    EventBus,
)
from toolgate.agent.redact import Redactor
from toolgate.lsp.actions import failure_actions, proposal_actions
from toolgate.lsp.arguments import (
    AcceptArguments,
    AskArguments,
    CancelArguments,
    FixFailureArguments,
    ListSessionsArguments,
    NewSessionArguments,
    RejectArguments,
    RenameSessionArguments,
    ReportDiagnosticsArguments,
    ReportedDiagnostic,
    RunTestsArguments,
    SessionArguments,
)
from toolgate.lsp.client import SAVE_DOCUMENTS
from toolgate.lsp.code_review import register as register_code_review
from toolgate.lsp.code_review import review_actions
from toolgate.lsp.convert import event_payload, failure_diagnostic, path_to_uri, uri_to_path
from toolgate.lsp.framing import FrameReader, max_message_bytes, serve_frames, stdin_reader
from toolgate.lsp.planning import plan_actions
from toolgate.lsp.planning import register as register_planning
from toolgate.lsp.protocol import ToolgateProtocol, toolgate_converter
from toolgate.lsp.session_watch import register as register_session_watch
from toolgate.lsp.session_watch import watch_sessions
from toolgate.lsp.settings import EditorSettings, SettingsError, parse_settings
from toolgate.lsp.undo import register as register_undo

if TYPE_CHECKING:
    # The engine is imported when a run (or a review) first needs it, so that the server
    # answers `initialize` after loading little more than pygls.
    from toolgate.config import Config, TrustItem
    from toolgate.lsp.reviewer import LspReviewer
    from toolgate.session import Claim, SessionService
    from toolgate.session.deltas import TextDeltas

log = logging.getLogger(__name__)

EVENT = "toolgate/event"


class ToolgateServer(LanguageServer):
    """Holds the server's state: settings, the active run, proposals and diagnostics."""

    def __init__(self) -> None:
        super().__init__(
            "toolgate",
            __version__,
            protocol_cls=ToolgateProtocol,
            converter_factory=toolgate_converter,
        )
        self.max_message_bytes = max_message_bytes()
        self.editor = EditorSettings()
        self.root: Path | None = None
        self._reviewer: LspReviewer | None = None
        self.turn: Claim | None = None  # the agent turn in progress, which a cancel stops
        self.run_task: asyncio.Task[Any] | None = None
        self.active_run_id: str | None = None
        self._service: SessionService | None = None
        self.run_sessions: dict[str, str] = {}  # run id → the session it continues
        self._deltas: TextDeltas | None = None
        self.test_diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.review_diagnostics: dict[str, list[types.Diagnostic]] = {}  # lsp/code_review.py
        self.other_diagnostics: dict[str, list[ReportedDiagnostic]] = {}
        self._diag_waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._change_waiters: dict[str, list[asyncio.Future[None]]] = {}
        self.redactor = Redactor()
        self._call_args: dict[str, Any] = {}
        self._finished_runs: set[str] = set()

    @property
    def reviewer(self) -> LspReviewer | None:
        """The Reviewer port of this workspace, made on first use (None without a folder)."""
        if self._reviewer is None and self.root is not None:
            from toolgate.lsp.reviewer import LspReviewer
            from toolgate.workspace import Workspace

            self._reviewer = LspReviewer(self, Workspace(self.root))
        return self._reviewer

    @property
    def service(self) -> SessionService:
        """The session service of this workspace, made on first use."""
        if self._service is None:
            from toolgate.session import SessionService

            self._service = SessionService(
                self.workspace_root(), self.config, trust_prompt=self._ask_trust, notice=self.log
            )
        return self._service

    def pending_entries(self) -> list[Any]:
        """Proposals waiting for the person (none before the reviewer exists)."""
        return list(self._reviewer.pending.values()) if self._reviewer is not None else []

    # -- transport ----------------------------------------------------------------------------

    def _start_io_async(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve stdio through `FrameReader`, which bounds what one message may cost."""
        self._stop_event = stop = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        assert isinstance(self.protocol, ToolgateProtocol)
        protocol = self.protocol

        async def main() -> None:
            read_some = stdin_reader(stdin or sys.stdin.buffer, asyncio.get_running_loop())
            await serve_frames(
                FrameReader(read_some, self.max_message_bytes), protocol.receive, stop
            )

        try:
            asyncio.run(main())
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one TCP client at a time through `FrameReader`."""
        self._stop_event = stop = threading.Event()
        assert isinstance(self.protocol, ToolgateProtocol)
        protocol = self.protocol

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            protocol.set_writer(writer)
            frames = FrameReader(reader.read, self.max_message_bytes)
            await serve_frames(frames, protocol.receive, stop)
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated

        async def main() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            async with self._server:
                await self._server.serve_forever()

        try:
            asyncio.run(main())
        except asyncio.CancelledError:
            log.debug("the server was cancelled")

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A notification that could not be applied is logged, not shown as a pop-up."""
        if source is FeatureRequestError:
            return  # the request's answer carries the error
        self.log(f"could not handle a message: {error}", types.MessageType.Warning)

    # -- client facts -------------------------------------------------------------------------

    def _caps(self) -> types.ClientCapabilities:
        try:
            return self.client_capabilities
        except Exception:
            return types.ClientCapabilities()

    def supports_apply_edit(self) -> bool:
        """Whether the client applies workspace edits."""
        ws = self._caps().workspace
        return bool(ws and ws.apply_edit)

    def _workspace_edit_caps(self) -> types.WorkspaceEditClientCapabilities | None:
        ws = self._caps().workspace
        return ws.workspace_edit if ws else None

    def supports_annotations(self) -> bool:
        """Whether the client understands change annotations."""
        caps = self._workspace_edit_caps()
        return bool(caps and caps.change_annotation_support is not None)

    def supports_document_changes(self) -> bool:
        """Whether the client takes versioned `documentChanges` (else the plain `changes` map)."""
        caps = self._workspace_edit_caps()
        return bool(caps and caps.document_changes)

    def supports_create_file(self) -> bool:
        """Whether the client can create files in a workspace edit."""
        caps = self._workspace_edit_caps()
        ops = (caps.resource_operations or []) if caps else []
        return types.ResourceOperationKind.Create in ops and bool(caps and caps.document_changes)

    def supports_progress(self) -> bool:
        """Whether the client shows server-initiated progress."""
        window = self._caps().window
        return bool(window and window.work_done_progress)

    # -- documents ----------------------------------------------------------------------------

    def open_text(self, uri: str) -> str | None:
        """The open buffer's text, or None when the document is not open."""
        doc = self.workspace.text_documents.get(uri)
        return doc.source if doc is not None else None

    def open_version(self, uri: str) -> int | None:
        """The open buffer's version, or None."""
        doc = self.workspace.text_documents.get(uri)
        return doc.version if doc is not None else None

    def buffers(self) -> dict[Path, str]:
        """Open buffers by real path, for the engine's workspace overlay."""
        out = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            path = uri_to_path(uri)
            if path is not None:
                out[Path(path).resolve()] = doc.source
        return out

    async def wait_for_change(
        self, uri: str, version: int | None, timeout: float = 3.0
    ) -> str | None:
        """After a confirmable edit, wait for the client's didChange before reading the text."""
        if self.open_version(uri) == version and version is not None:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._change_waiters.setdefault(uri, []).append(future)
            try:
                await asyncio.wait_for(future, timeout)
            except asyncio.TimeoutError:
                pass
        text = self.open_text(uri)
        if text is None:
            path = uri_to_path(uri)
            if path is not None and path.exists():
                return path.read_text("utf-8")
        return text

    def document_changed(self, uri: str) -> None:
        """Wake waiters and re-check pending proposals of this document."""
        for future in self._change_waiters.pop(uri, []):
            if not future.done():
                future.set_result(None)
        path = uri_to_path(uri)
        text = self.open_text(uri)
        if self._reviewer is not None and path is not None and text is not None:
            self._reviewer.document_changed(path.resolve(), text)

    async def reported_diagnostics(self, uri: str, timeout: float) -> list[ReportedDiagnostic]:
        """Diagnostics the client reports for a file after an edit (waits briefly for them)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._diag_waiters.setdefault(uri, []).append(future)
        try:
            await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            pass
        return [d for d in self.other_diagnostics.get(uri, []) if d.source != "toolgate"]

    # -- messages -----------------------------------------------------------------------------

    def notify(self, method: str, params: Any) -> None:
        """Send a notification with every secret redacted."""
        self.protocol.notify(method, self.redactor.deep(params))

    def log(self, message: str, level: types.MessageType = types.MessageType.Info) -> None:
        """Log to stderr and to the client's log."""
        message = self.redactor.text(message)
        log.log(_LOG_LEVELS.get(level, logging.INFO), message)
        try:
            self.window_log_message(types.LogMessageParams(type=level, message=message))
        except Exception:
            pass

    # -- configuration ------------------------------------------------------------------------

    def config(self) -> Config:
        """The engine configuration for the workspace, with the editor's settings on top."""
        from toolgate.config import load_config

        assert self.root is not None
        config = load_config(self.root, overrides=self.editor.overrides or None)
        if self.editor.api_key:
            config.api_key = self.editor.api_key
        self.redactor.add(config.api_key)
        return config

    def workspace_root(self) -> Path:
        """The first workspace folder (or the root URI)."""
        if self.root is None:
            raise JsonRpcInvalidParams("no workspace folder is open")
        return self.root

    # -- diagnostics --------------------------------------------------------------------------

    def publish_test_failures(self, test_run: Any) -> None:
        """Diagnostics for each file with a failure; files whose failures are gone are cleared."""
        root = self.workspace_root()
        by_uri: dict[str, list[types.Diagnostic]] = {}
        for failure in test_run.failures:
            path = Path(failure.file)
            if not path.is_absolute():
                path = root / path
            by_uri.setdefault(path_to_uri(path), []).append(
                failure_diagnostic(failure, root, self.editor.failure_severity)
            )
        gone = set(self.test_diagnostics) - set(by_uri)
        self.test_diagnostics = by_uri
        for uri in [*gone, *by_uri]:
            self.publish_diagnostics(uri)

    def publish_diagnostics(self, uri: str) -> None:
        """Toolgate's diagnostics of one file: its test failures and review comments together."""
        diagnostics = [*self.test_diagnostics.get(uri, []), *self.review_diagnostics.get(uri, [])]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )

    # -- runs ---------------------------------------------------------------------------------

    def forward(self, event: Event) -> None:
        """Engine events → `toolgate/event` notifications (and progress)."""
        payload = event_payload(event, self._call_args)
        if event.type == TOOL_CALL_EXECUTED:
            f = event.fields
            self._progress_report(f"{f['tool_name']}: {'ok' if f['success'] else 'failed'}")
        elif event.type == TOOL_PROGRESS:
            f = event.fields
            self._progress_report(f"{f['tool_name']}: {f['line'][:120]}")
        elif event.type == NOTICE:
            self.log(event.fields["message"])
        elif event.type == RUN_FINISHED:
            self._finished_runs.add(event.run_id)
        if payload is not None:
            self.notify_run(payload)

    def notify_run(self, payload: dict[str, Any]) -> None:
        """Send one `toolgate/event` of a run, naming the session the run continues."""
        session_id = self.run_sessions.get(str(payload.get("runId")))
        if session_id is not None:
            payload["sessionId"] = session_id
        self.notify(EVENT, payload)

    def _text_delta(self, run_id: str, text: str) -> None:
        self.notify_run({"type": "text_delta", "runId": run_id, "text": text})

    def _progress_report(self, message: str) -> None:
        token = self._progress_token
        if token is not None:
            self.work_done_progress.report(token, types.WorkDoneProgressReport(message=message))

    _progress_token: str | None = None

    async def start_run(
        self, task: str, session_id: str | None = None, new_session: bool = False
    ) -> dict[str, str]:
        """Start a run continuing a session in the background; `{runId, sessionId}` at once."""
        if self.run_task is not None and not self.run_task.done():
            raise JsonRpcInvalidParams(
                f"a run is already active ({self.active_run_id}); cancel it or wait for it"
            )
        from toolgate.session import ConfigError, SessionError

        try:
            config = self.config()
        except ConfigError as exc:
            raise JsonRpcInvalidParams(f"configuration error: {exc}") from None
        try:
            # Claimed now, so that an unknown or busy session is this request's error.
            claim = self.service.claim(session_id, new=new_session)
        except SessionError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        self.active_run_id = claim.run_id
        self.run_sessions[claim.run_id] = claim.session_id
        self.turn = claim  # a cancel from here on stops the turn, its set-up included
        self.run_task = asyncio.ensure_future(self._run(task, claim, config))
        return {"runId": claim.run_id, "sessionId": claim.session_id}

    async def _run(self, task: str, claim: Claim, config: Config) -> None:
        from toolgate.session import ConfigError, SetupError, TurnHooks
        from toolgate.session.deltas import TextDeltas

        run_id = claim.run_id

        if self._deltas is None:
            self._deltas = TextDeltas(self._text_delta)
        bus = EventBus()
        bus.subscribe(self._deltas)  # first: text gathered so far is sent before each event
        bus.subscribe(self.forward)
        assert self.reviewer is not None
        token: str | None = None
        service = self.service
        try:
            if self.supports_progress():
                token = f"toolgate-{run_id}"
                try:
                    await self.work_done_progress.create_async(token)
                    self.work_done_progress.begin(
                        token,
                        types.WorkDoneProgressBegin(
                            title="Toolgate", message=task[:80], cancellable=True
                        ),
                    )
                    self._progress_token = token
                    future = self.work_done_progress.tokens.get(token)
                    if future is not None:
                        future.add_done_callback(
                            lambda f: (
                                self.cancel_run("cancelled from the progress notification")
                                if f.cancelled()
                                else None
                            )
                        )
                except Exception:
                    token = None
            await self._forget_ended_local_model()
            try:
                outcome = await service.turn(
                    claim,
                    task,
                    config=config,
                    reviewer=self.reviewer,
                    bus=bus,
                    hooks=TurnHooks(on_test_run=self.publish_test_failures),
                    buffers=self.buffers,
                    trusted=self.editor.trusted,
                )
            except (SetupError, ConfigError) as exc:
                message = self.redactor.text(str(exc))
                status = "blocked_by_policy" if getattr(exc, "blocked", False) else "failed"
                self.notify_run(
                    {
                        "type": "run_finished",
                        "runId": run_id,
                        "status": status,
                        "reason": message,
                        "answer": None,
                    }
                )
                self.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Error, message=f"Toolgate: {message}"
                    )
                )
                return
            if outcome.status == "failed":
                await self._forget_ended_local_model()
            if outcome.status not in ("completed", "cancelled"):
                self.log(
                    f"run {run_id} {outcome.status}: {outcome.reason}", types.MessageType.Warning
                )
        except Exception as exc:  # never let a run take the server down
            log.exception("run %s crashed", run_id)
            # The engine may have announced the end already and failed after it (its run log).
            if run_id not in self._finished_runs:
                self.notify_run(
                    {
                        "type": "run_finished",
                        "runId": run_id,
                        "status": "failed",
                        "reason": self.redactor.text(f"internal error: {exc}"),
                        "answer": None,
                    }
                )
        finally:
            self.turn = None
            service.release(claim)  # the turn released it, unless it never began
            if self._reviewer is not None:
                self._reviewer.cancel_all("the run ended")
            if token is not None:
                self._progress_token = None
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))

    async def _ask_trust(self, item: TrustItem) -> bool:
        """The session service's trust prompt: a message request with Allow / Not now."""
        try:
            choice = await self.ask(
                f"Toolgate: {item.describe()}. Allow it for this workspace?",
                ["Allow", "Not now"],
                warning=True,
            )
        except Exception:
            return False
        return choice == "Allow"

    async def _forget_ended_local_model(self) -> None:
        """Say so once if the kept embedded model server has ended; the next run starts another.

        The person sees the one line that names the signal and the log, and the server stays up.
        """
        report = await self.service.forget_ended_endpoint()
        if report is not None:
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"Toolgate: {report}")
            )

    async def ask(self, message: str, actions: list[str], *, warning: bool = False) -> str | None:
        """Ask the person with `window/showMessageRequest`; the chosen title, or None."""
        choice = await self.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning if warning else types.MessageType.Info,
                message=message,
                actions=[types.MessageActionItem(title=title) for title in actions],
            )
        )
        return choice.title if choice is not None else None

    async def save(self, uris: list[str], timeout: float) -> list[str]:
        """Ask the client to save documents (`toolgate/saveDocuments`); the ones it saved."""
        reply = await asyncio.wait_for(
            self.protocol.send_request_async(SAVE_DOCUMENTS, {"uris": uris}), timeout=timeout
        )
        saved = reply.get("saved") if isinstance(reply, dict) else getattr(reply, "saved", None)
        return [str(uri) for uri in saved or []]

    async def apply_edit(
        self, edit: types.WorkspaceEdit, label: str
    ) -> types.ApplyWorkspaceEditResult:
        """Send `workspace/applyEdit` and wait for the client's answer."""
        return await self.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=label)
        )

    @property
    def confirm_in_editor(self) -> bool:
        """Whether proposals are confirmed in the editor's own preview."""
        return self.editor.confirm_in_editor

    @property
    def reports_diagnostics(self) -> bool:
        """Whether the client reports its diagnostics after an edit."""
        return self.editor.reports_diagnostics

    def cancel_run(self, reason: str = "cancelled by the person") -> bool:
        """Cancel the active run, if any."""
        if self.run_task is None or self.run_task.done():
            return False
        if self.turn is not None:
            self.turn.cancel(reason)  # its set-up, or its run
            if self._reviewer is not None:
                self._reviewer.cancel_all(reason)
        else:
            self.run_task.cancel()  # a workflow, or a review loop between its turns
        return True

    async def run_tests_command(self, command: str | None) -> dict[str, Any]:
        """The person's own test run: the `run_tests` tool through the session's gate."""
        assert self.reviewer is not None
        bus = EventBus()
        try:
            result = await self.service.run_tests(
                command,
                reviewer=self.reviewer,
                bus=bus,
                trusted=self.editor.trusted,
                buffers=self.buffers,
                on_test_run=self.publish_test_failures,
            )
        except ValueError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        data = result.data if isinstance(result.data, dict) else {}
        for note in data.get("notes") or []:
            self.log(str(note), types.MessageType.Warning)
        if "summary" not in data:
            raise JsonRpcInvalidParams(result.error or "the tests could not run")
        return {
            "summary": data["summary"],
            "failures": data["failures"],
            "exitCode": data["exit_code"],
        }


server = ToolgateServer()
register_planning(server)
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
    return actions + failure_actions(uri, params.context.diagnostics)


@server.command("toolgate.ask")
async def ask(ls: ToolgateServer, args: AskArguments) -> dict[str, Any]:
    """Start a run: `[{"task": "…", "context"?: {...}}]` → `{"runId"}`."""
    task = args.task
    context = args.context
    if context is not None:
        where = _relative(ls, context.uri, name="context uri")
        if where or context.text:
            task += f"\n\nContext: the person is looking at {where or 'a file'}"
            if context.range is not None:
                task += f", lines {context.range.start.line + 1}-{context.range.end.line + 1}"
            if context.text:
                task += f"; selected text:\n```\n{context.text[:8000]}\n```"
    return await ls.start_run(task, args.session_id, args.new_session)


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


_LOG_LEVELS = {
    types.MessageType.Error: logging.ERROR,
    types.MessageType.Warning: logging.WARNING,
}
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
