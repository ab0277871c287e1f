"""The language server's state: the ToolgateServer class, which imports no feature.

Features (`lsp/server.py`'s handlers, `code_review.py`, `planning.py`, `setup.py`,
`undo.py`, `session_watch.py`) import it and register on the one instance `lsp/server.py`
makes; none of them is imported here, so the state and the features never import each
other.
"""

from __future__ import annotations

import asyncio
import logging
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
from toolgate.lsp.arguments import (
    ReportedDiagnostic,
)
from toolgate.lsp.client import SAVE_DOCUMENTS
from toolgate.lsp.convert import event_payload, failure_diagnostic, path_to_uri, uri_to_path
from toolgate.lsp.framing import FrameReader, max_message_bytes, serve_frames, stdin_reader
from toolgate.lsp.protocol import ToolgateProtocol, toolgate_converter
from toolgate.lsp.settings import EditorSettings

if TYPE_CHECKING:
    # The engine is imported when a run (or a review) first needs it, so that the server
    # answers `initialize` after loading little more than pygls.
    from toolgate.config import Config, TrustItem
    from toolgate.lsp.reviewer import LspReviewer
    from toolgate.records import ToolCall, ToolResult
    from toolgate.session import Claim, SessionService
    from toolgate.session.deltas import TextDeltas
    from toolgate.session.mentions import Pointed

log = logging.getLogger("toolgate.lsp.server")  # the server's log, as before the move

_LOG_LEVELS = {
    types.MessageType.Error: logging.ERROR,
    types.MessageType.Warning: logging.WARNING,
}

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
        self._call_results: dict[str, str] = {}  # call id → the excerpt its result shows
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
        return _others(self.other_diagnostics.get(uri, []))

    def last_reported(self, uri: str) -> list[ReportedDiagnostic] | None:
        """What the client last reported for a file (None: it never reported the file)."""
        found = self.other_diagnostics.get(uri)
        return None if found is None else _others(found)

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
        """Diagnostics for each file with a failure; files whose failures are gone are cleared.

        A run that did not run its tests is no run without failures: the person is told what
        happened (no results, no test collected and where pytest looked, a timeout).
        """
        from toolgate.session.turns import not_run_reason

        not_run = not_run_reason(test_run)
        if not_run is not None:
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=self.redactor.text(f"Toolgate: tests did not run: {not_run}"),
                )
            )
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
        payload = event_payload(event, self._call_args, self._call_results)
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

    def _keep_result(self, call: ToolCall, result: ToolResult) -> None:
        """Keep the excerpt a finished call shows, for its `tool_result` event (secrets out)."""
        from toolgate.session.result_text import result_text

        text = result_text(result)
        if text is not None:
            self._call_results[call.id] = text

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
        self,
        task: str,
        session_id: str | None = None,
        new_session: bool = False,
        *,
        pointed: Pointed | None = None,
    ) -> dict[str, str]:
        """Start a run continuing a session in the background; `{runId, sessionId}` at once.

        `pointed` is the editor's selection and problems for the task's `@` mentions.
        """
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
        self.run_task = asyncio.ensure_future(self._run(task, claim, config, pointed))
        return {"runId": claim.run_id, "sessionId": claim.session_id}

    async def _run(
        self, task: str, claim: Claim, config: Config, pointed: Pointed | None = None
    ) -> None:
        from toolgate.lsp.mentions import pointed_of
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
            token = await self._begin_progress(run_id, task)
            await self._forget_ended_local_model()
            try:
                outcome = await service.turn(
                    claim,
                    task,
                    config=config,
                    reviewer=self.reviewer,
                    bus=bus,
                    hooks=TurnHooks(
                        on_test_run=self.publish_test_failures, on_result=self._keep_result
                    ),
                    buffers=self.buffers,
                    trusted=self.editor.trusted,
                    mode=self.editor.approval_mode,
                    pointed=pointed or pointed_of(self.workspace_root(), None),
                )
            except (SetupError, ConfigError) as exc:
                self._not_started(run_id, exc)
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

    async def _begin_progress(self, run_id: str, task: str) -> str | None:
        """A cancellable progress for the run, when the client shows them; its token."""
        if not self.supports_progress():
            return None
        token = f"toolgate-{run_id}"
        try:
            await self.work_done_progress.create_async(token)
            self.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(title="Toolgate", message=task[:80], cancellable=True),
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
            return None
        return token

    def _not_started(self, run_id: str, exc: Exception) -> None:
        """A turn its set-up refused: the run ends at once, and the person is told why."""
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
            types.ShowMessageParams(type=types.MessageType.Error, message=f"Toolgate: {message}")
        )

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

    async def open_external(self, uri: str) -> bool:
        """Open a page in the person's browser through `window/showDocument` (external)."""
        window = self._caps().window
        if not (window and window.show_document and window.show_document.support):
            return False
        result = await self.window_show_document_async(
            types.ShowDocumentParams(uri=uri, external=True)
        )
        return bool(result is not None and result.success)

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
            "notRun": data.get("not_run"),  # why the tests did not run; null when they ran
        }


def _others(diagnostics: list[ReportedDiagnostic]) -> list[ReportedDiagnostic]:
    """Other servers' diagnostics: the server's own (test failures, review comments) left out."""
    return [d for d in diagnostics if not (d.source or "").startswith("toolgate")]
