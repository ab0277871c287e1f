"""The Toolgate language server: commands, code actions, proposals, diagnostics, progress.

Handlers stay thin: they translate LSP to engine calls (`toolgate.session`) and back
(`toolgate.lsp.convert`). The engine never imports pygls.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgate.lsp.codecache import attrs_code_cache

with attrs_code_cache():
    # Most of the start-up is lsprotocol creating its attrs classes: reuse their compiled code.
    from lsprotocol import types
    from pygls.exceptions import JsonRpcInvalidParams
    from pygls.lsp.server import LanguageServer

from toolgate import __version__
from toolgate.agent.events import (
    ASSISTANT_TEXT,
    MODE_CHANGED,
    NOTICE,
    RUN_FINISHED,
    RUN_STARTED,
    TESTS_FINISHED,
    TOOL_CALL_DECIDED,
    TOOL_CALL_EXECUTED,
    TOOL_CALL_PARSE_ERROR,
    TOOL_CALL_PROPOSED,
    TOOL_PROGRESS,
    Event,
    EventBus,
)
from toolgate.agent.redact import Redactor
from toolgate.lsp.convert import failure_diagnostic, path_to_uri, uri_to_path
from toolgate.lsp.planning import plan_actions
from toolgate.lsp.planning import register as register_planning
from toolgate.lsp.settings import EditorSettings, SettingsError, parse_settings

if TYPE_CHECKING:
    # The engine is imported when a run (or a review) first needs it, so that the server
    # answers `initialize` after loading little more than pygls.
    from toolgate.agent.loop import AgentRun
    from toolgate.config import Config
    from toolgate.lsp.reviewer import LspReviewer
    from toolgate.session import Endpoint

log = logging.getLogger(__name__)

EVENT = "toolgate/event"


class ToolgateServer(LanguageServer):
    """Holds the server's state: settings, the active run, proposals and diagnostics."""

    def __init__(self) -> None:
        super().__init__("toolgate", __version__)
        self.editor = EditorSettings()
        self.root: Path | None = None
        self._reviewer: LspReviewer | None = None
        self.run: AgentRun | None = None
        self.run_task: asyncio.Task[Any] | None = None
        self.active_run_id: str | None = None
        self.endpoint: Endpoint | None = None
        self.test_diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.other_diagnostics: dict[str, list[dict[str, Any]]] = {}
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

    def pending_entries(self) -> list[Any]:
        """Proposals waiting for the person (none before the reviewer exists)."""
        return list(self._reviewer.pending.values()) if self._reviewer is not None else []

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

    async def reported_diagnostics(self, uri: str, timeout: float) -> list[dict[str, Any]]:
        """Diagnostics the client reports for a file after an edit (waits briefly for them)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._diag_waiters.setdefault(uri, []).append(future)
        try:
            await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            pass
        return [d for d in self.other_diagnostics.get(uri, []) if d.get("source") != "toolgate"]

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
        for uri in set(self.test_diagnostics) - set(by_uri):
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )
        for uri, diagnostics in by_uri.items():
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
            )
        self.test_diagnostics = by_uri

    # -- runs ---------------------------------------------------------------------------------

    def forward(self, event: Event) -> None:
        """Engine events → `toolgate/event` notifications (and progress)."""
        f = event.fields
        payload: dict[str, Any] | None = None
        if event.type == RUN_STARTED:
            payload = {"type": "run_started", "task": f.get("task")}
        elif event.type == ASSISTANT_TEXT:
            payload = {"type": "assistant_text", "text": f["text"]}
        elif event.type == TOOL_CALL_PROPOSED:
            self._call_args[f["call_id"]] = f.get("raw_args")
        elif event.type == TOOL_CALL_DECIDED:
            payload = {
                "type": "tool_call",
                "callId": f["call_id"],
                "tool": f["tool_name"],
                "arguments": self._call_args.get(f["call_id"]),
                "decision": f["decision"],
                "why": f.get("why"),
            }
        elif event.type == TOOL_CALL_EXECUTED:
            self._call_args.pop(f["call_id"], None)
            payload = {
                "type": "tool_result",
                "callId": f["call_id"],
                "tool": f["tool_name"],
                "success": f["success"],
                "error": f.get("error"),
                "decision": f["decision"],
            }
            self._progress_report(f"{f['tool_name']}: {'ok' if f['success'] else 'failed'}")
        elif event.type == TOOL_PROGRESS:
            # A tool's stderr: the chat view shows it, and so does the run's progress.
            payload = {"type": "tool_progress", "tool": f["tool_name"], "line": f["line"]}
            self._progress_report(f"{f['tool_name']}: {f['line'][:120]}")
        elif event.type == TOOL_CALL_PARSE_ERROR:
            payload = {
                "type": "parse_error",
                "error": f["error"],
                "rawExcerpt": f.get("raw_excerpt", ""),
            }
        elif event.type == MODE_CHANGED:
            payload = {"type": "mode_changed", "mode": f["mode"], "reason": f.get("reason")}
        elif event.type == TESTS_FINISHED:
            payload = {"type": "tests_finished", "summary": f.get("summary")}
        elif event.type == NOTICE:
            payload = {"type": "notice", "message": f["message"]}
            self.log(f["message"])
        elif event.type == RUN_FINISHED:
            self._finished_runs.add(event.run_id)
            payload = {
                "type": "run_finished",
                "status": f["status"],
                "reason": f.get("reason"),
                "answer": f.get("answer"),
            }
            if "done" in f:  # a workflow's final account
                payload.update(done=f["done"], missing=f.get("missing", []))
        if payload is not None:
            payload["runId"] = event.run_id
            self.notify(EVENT, payload)

    def _progress_report(self, message: str) -> None:
        token = self._progress_token
        if token is not None:
            self.work_done_progress.report(token, types.WorkDoneProgressReport(message=message))

    _progress_token: str | None = None

    async def start_run(self, task: str) -> str:
        """Start a run in the background and return its id at once."""
        if self.run_task is not None and not self.run_task.done():
            raise JsonRpcInvalidParams(
                f"a run is already active ({self.active_run_id}); cancel it or wait for it"
            )
        from toolgate.config import ConfigError

        root = self.workspace_root()
        try:
            config = self.config()
        except ConfigError as exc:
            raise JsonRpcInvalidParams(f"configuration error: {exc}") from None
        run_id = f"r-{uuid.uuid4().hex[:10]}"
        self.active_run_id = run_id
        self.run = None  # until this run is assembled, a cancel stops its setup
        self.run_task = asyncio.ensure_future(self._run(run_id, task, root, config))
        return run_id

    async def _run(self, run_id: str, task: str, root: Path, config: Config) -> None:
        from toolgate.config import ConfigError
        from toolgate.session import (
            RunSetup,
            SetupError,
            create_run,
            resolve_endpoint,
        )

        bus = EventBus()
        bus.subscribe(self.forward)
        assert self.reviewer is not None
        token: str | None = None
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
            await self._confirm_trust(root, config)
            await self._forget_ended_local_model()
            try:
                if self.endpoint is None or config.base_url:
                    endpoint = await resolve_endpoint(config, self.log)
                    if not config.base_url:
                        self.endpoint = endpoint  # keep the embedded model for later runs
                else:
                    endpoint = self.endpoint
                setup = RunSetup(
                    root=root,
                    config=config,
                    reviewer=self.reviewer,
                    bus=bus,
                    buffers=self.buffers,
                    trusted=self.editor.trusted,
                    on_test_run=self.publish_test_failures,
                )
                self.run = await create_run(setup, task, endpoint, run_id=run_id)
            except (SetupError, ConfigError) as exc:
                message = self.redactor.text(str(exc))
                status = "blocked_by_policy" if getattr(exc, "blocked", False) else "failed"
                self.notify(
                    EVENT,
                    {
                        "type": "run_finished",
                        "runId": run_id,
                        "status": status,
                        "reason": message,
                        "answer": None,
                    },
                )
                self.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Error, message=f"Toolgate: {message}"
                    )
                )
                return
            outcome = await self.run.run()
            await self.run.model.close()
            if outcome.status == "failed":
                await self._forget_ended_local_model()
            if outcome.status not in ("completed", "cancelled"):
                self.log(
                    f"run {run_id} {outcome.status}: {outcome.reason}", types.MessageType.Warning
                )
        except asyncio.CancelledError:
            # Cancelled while it was being set up (starting the model or MCP servers): the
            # engine never started, so the end is announced here.
            if run_id not in self._finished_runs:
                self._finished_runs.add(run_id)
                self.notify(
                    EVENT,
                    {
                        "type": "run_finished",
                        "runId": run_id,
                        "status": "cancelled",
                        "reason": "cancelled while the run was being set up",
                        "answer": None,
                    },
                )
            raise
        except Exception as exc:  # never let a run take the server down
            log.exception("run %s crashed", run_id)
            # The engine may have announced the end already and failed after it (its run log).
            if run_id not in self._finished_runs:
                self.notify(
                    EVENT,
                    {
                        "type": "run_finished",
                        "runId": run_id,
                        "status": "failed",
                        "reason": self.redactor.text(f"internal error: {exc}"),
                        "answer": None,
                    },
                )
        finally:
            if self._reviewer is not None:
                self._reviewer.cancel_all("the run ended")
            if token is not None:
                self._progress_token = None
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))

    async def _forget_ended_local_model(self) -> None:
        """Say so once if the kept embedded model server has ended; the next run starts another.

        The person sees the one line that names the signal and the log, and the server stays up.
        """
        if self.endpoint is None:
            return
        from toolgate.model.local import exit_report_for

        report = await exit_report_for(self.endpoint.base_url, wait=0)
        if report is None:
            return
        endpoint, self.endpoint = self.endpoint, None
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"Toolgate: {report}")
        )
        if endpoint.close is not None:
            await endpoint.close()

    async def _confirm_trust(self, root: Path, config: Config) -> None:
        from toolgate.trust import TrustStore

        store = TrustStore()
        confirmed = store.confirmed(root)
        for item in config.pending_trust:
            if item.fingerprint in confirmed:
                continue
            if item.kind == "base_url" and not config.api_key:
                continue
            try:
                choice = await self.window_show_message_request_async(
                    types.ShowMessageRequestParams(
                        type=types.MessageType.Warning,
                        message=f"Toolgate: {item.describe()}. Allow it for this workspace?",
                        actions=[
                            types.MessageActionItem(title="Allow"),
                            types.MessageActionItem(title="Not now"),
                        ],
                    )
                )
            except Exception:
                continue
            if choice is not None and choice.title == "Allow":
                store.confirm(root, [item.fingerprint])

    def cancel_run(self, reason: str = "cancelled by the person") -> bool:
        """Cancel the active run, if any."""
        if self.run is not None and self.run_task is not None and not self.run_task.done():
            self.run.cancel(reason)
            if self._reviewer is not None:
                self._reviewer.cancel_all(reason)
            return True
        if self.run_task is not None and not self.run_task.done():
            self.run_task.cancel()
            return True
        return False

    async def run_tests_command(self, command: str | None) -> dict[str, Any]:
        """The person's own test run: same runner and allow-list as the tool."""
        from toolgate.runner.allowlist import (
            CommandRefused,
            is_allowed,
            parse_allowed,
            split_command,
        )
        from toolgate.runner.process import resolve_executable
        from toolgate.testing.runner import run_pytest

        root = self.workspace_root()
        if not self.editor.trusted:
            raise JsonRpcInvalidParams("this workspace is not trusted: tests may not run here")
        config = self.config()
        try:
            argv = split_command(command or "pytest -q --tb=short")
        except CommandRefused as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        if not is_allowed(argv, parse_allowed(config.allowed_commands)):
            raise JsonRpcInvalidParams(
                f"{' '.join(argv)} is not on the allow-list ({', '.join(config.allowed_commands)})"
            )
        if self.reviewer is not None:
            for note in await self.reviewer.before_tests():
                self.log(note, types.MessageType.Warning)
        test_run = await run_pytest(
            root,
            resolve_executable(argv, root, root=root),
            cwd=root,
            timeout_seconds=config.limits.command_timeout_seconds,
            sandbox=config.sandbox,
        )
        self.publish_test_failures(test_run)
        data = test_run.to_data()
        return {
            "summary": data["summary"],
            "failures": data["failures"],
            "exitCode": test_run.exit_code,
        }


server = ToolgateServer()
register_planning(server)


def _arg(args: Any, index: int, default: Any = None) -> Any:
    if isinstance(args, (list, tuple)) and len(args) > index:
        return args[index]
    return default


def _object_arg(args: Any, name: str) -> dict[str, Any]:
    first = _arg(args, 0)
    if first is None or first == []:
        # Lua has one empty table for `{}` and `[]`, and Neovim sends it as `[]`.
        return {}
    if not isinstance(first, dict):
        raise JsonRpcInvalidParams(f"{name} takes one object argument")
    return first


def _string_arg(args: Any, index: int, what: str) -> str:
    value = _arg(args, index)
    if not isinstance(value, str) or not value:
        raise JsonRpcInvalidParams(f"{what} must be a non-empty string")
    return value


@server.feature(types.INITIALIZED)
def initialized(ls: ToolgateServer, params: types.InitializedParams) -> None:
    """Log which workspace the server serves."""
    ls.log(f"Toolgate {__version__} serving {ls.root}")


@server.feature(types.INITIALIZE)
def initialize(ls: ToolgateServer, params: types.InitializeParams) -> None:
    """Read the workspace folder and the editor's settings."""
    folder = None
    if params.workspace_folders:
        folder = uri_to_path(params.workspace_folders[0].uri)
    elif params.root_uri:
        folder = uri_to_path(params.root_uri)
    elif params.root_path:
        folder = Path(params.root_path)
    if folder is not None:
        ls.root = Path(folder).resolve()
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
    """Accept / Reject for pending proposals on this file; "Ask agent to fix" on failures."""
    actions: list[types.CodeAction] = []
    uri = params.text_document.uri
    path = uri_to_path(uri)
    if path is not None:
        real = path.resolve()
        for entry in ls.pending_entries():
            proposal = entry.proposal
            if ls.workspace_root() / proposal.path != real:
                continue
            label = f"{proposal.tool} proposal: {proposal.path}"
            actions.append(
                types.CodeAction(
                    title=f"Accept {label}",
                    kind=types.CodeActionKind.Refactor,
                    command=types.Command(
                        title="Accept", command="toolgate.acceptProposal", arguments=[proposal.id]
                    ),
                )
            )
            actions.append(
                types.CodeAction(
                    title=f"Reject {label}",
                    kind=types.CodeActionKind.Refactor,
                    command=types.Command(
                        title="Reject", command="toolgate.rejectProposal", arguments=[proposal.id]
                    ),
                )
            )
            if len(proposal.hunks) > 1:
                for hunk in proposal.hunks:
                    if hunk.start <= params.range.end.line and params.range.start.line <= hunk.end:
                        actions.append(
                            types.CodeAction(
                                title=f"Accept hunk {hunk.index + 1} of {label}",
                                kind=types.CodeActionKind.Refactor,
                                command=types.Command(
                                    title="Accept hunk",
                                    command="toolgate.acceptProposal",
                                    arguments=[proposal.id, [hunk.index]],
                                ),
                            )
                        )
        actions += plan_actions(ls, real)
    for diagnostic in params.context.diagnostics:
        if diagnostic.source != "toolgate":
            continue
        test_id = str(diagnostic.code or "the failing test")
        actions.append(
            types.CodeAction(
                title=f"Ask agent to fix {test_id}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(
                    title="Ask agent to fix",
                    command="toolgate.fixFailure",
                    arguments=[
                        {
                            "uri": uri,
                            "line": diagnostic.range.start.line,
                            "message": diagnostic.message,
                            "testId": test_id,
                        }
                    ],
                ),
            )
        )
    return actions


@server.command("toolgate.ask")
async def ask(ls: ToolgateServer, *args: Any) -> dict[str, Any]:
    """Start a run: `[{"task": "…", "context"?: {...}}]` → `{"runId"}`."""
    params = _object_arg(args, "toolgate.ask")
    task = params.get("task")
    if not isinstance(task, str) or not task.strip():
        raise JsonRpcInvalidParams('toolgate.ask needs [{"task": "…"}]')
    context = params.get("context")
    if isinstance(context, dict):
        path = uri_to_path(str(context.get("uri", "")))
        where = ""
        if path is not None:
            try:
                where = Path(path).resolve().relative_to(ls.workspace_root()).as_posix()
            except ValueError:
                raise JsonRpcInvalidParams("context uri is outside the workspace") from None
        selection = context.get("text")
        if where or selection:
            task += f"\n\nContext: the person is looking at {where or 'a file'}"
            rng = context.get("range")
            if isinstance(rng, dict):
                start = rng.get("start", {}).get("line", 0) + 1
                end = rng.get("end", {}).get("line", 0) + 1
                task += f", lines {start}-{end}"
            if isinstance(selection, str) and selection:
                task += f"; selected text:\n```\n{selection[:8000]}\n```"
    return {"runId": await ls.start_run(task)}


@server.command("toolgate.fixFailure")
async def fix_failure(ls: ToolgateServer, *args: Any) -> dict[str, Any]:
    """Start a run that fixes one failing test."""
    params = _object_arg(args, "toolgate.fixFailure")
    path = uri_to_path(str(params.get("uri", "")))
    rel = "?"
    if path is not None:
        try:
            rel = Path(path).resolve().relative_to(ls.workspace_root()).as_posix()
        except ValueError:
            raise JsonRpcInvalidParams("uri is outside the workspace") from None
    line = params.get("line")
    task = (
        f"The test {params.get('testId', '')} fails at {rel}:"
        f"{(line + 1) if isinstance(line, int) else '?'} with: {params.get('message', '')}\n"
        "Find the cause, fix it (in the code under test unless the test itself is wrong), "
        "and run the tests again to show it passes."
    )
    return {"runId": await ls.start_run(task)}


def _reviewer(ls: ToolgateServer) -> LspReviewer:
    if ls.reviewer is None:
        raise JsonRpcInvalidParams("no workspace folder is open")
    return ls.reviewer


@server.command("toolgate.acceptProposal")
async def accept_proposal(ls: ToolgateServer, *args: Any) -> dict[str, Any]:
    """Accept a proposal: `[id]` or `[id, [hunk indexes]]`."""
    from toolgate.lsp.reviewer import ReviewError

    proposal_id = _string_arg(args, 0, "proposal id")
    hunks = _arg(args, 1)
    if hunks is not None and not isinstance(hunks, list):
        raise JsonRpcInvalidParams("hunk indexes must be a list of integers")
    try:
        resolution = await _reviewer(ls).accept(proposal_id, hunks)
    except ReviewError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    return {
        "id": proposal_id,
        "status": resolution.status.value,
        "hunksApplied": resolution.hunks_applied,
        "reason": resolution.reason,
    }


@server.command("toolgate.rejectProposal")
def reject_proposal(ls: ToolgateServer, *args: Any) -> dict[str, Any]:
    """Reject a proposal: `[id, reason?]`."""
    from toolgate.lsp.reviewer import ReviewError

    proposal_id = _string_arg(args, 0, "proposal id")
    reason = _arg(args, 1)
    if reason is not None and not isinstance(reason, str):
        raise JsonRpcInvalidParams("the reason must be a string")
    try:
        resolution = _reviewer(ls).reject(proposal_id, reason or None)
    except ReviewError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    return {"id": proposal_id, "status": resolution.status.value}


@server.command("toolgate.acceptAll")
async def accept_all(ls: ToolgateServer, *args: Any) -> dict[str, Any]:
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
def list_proposals(ls: ToolgateServer, *args: Any) -> list[dict[str, Any]]:
    """Pending proposals, as `toolgate/proposal` sends them."""
    from toolgate.lsp.convert import proposal_payload

    reviewer = _reviewer(ls)
    out = []
    for entry in reviewer.pending.values():
        uri = path_to_uri(ls.workspace_root() / entry.proposal.path)
        out.append(proposal_payload(entry.proposal, uri, ls.open_version(uri)))
    return out


@server.command("toolgate.cancel")
def cancel(ls: ToolgateServer, *args: Any) -> dict[str, Any]:
    """Cancel the active run (`[runId?]`)."""
    run_id = _arg(args, 0)
    if run_id is not None and run_id != ls.active_run_id:
        raise JsonRpcInvalidParams(f"no active run with id {run_id!r}")
    return {"cancelled": ls.cancel_run()}


@server.command("toolgate.runTests")
async def run_tests(ls: ToolgateServer, *args: Any) -> dict[str, Any]:
    """Run the tests and publish failures as diagnostics: `[{"command"?: "…"}]`."""
    params = _object_arg(args, "toolgate.runTests")
    command = params.get("command")
    if command is not None and not isinstance(command, str):
        raise JsonRpcInvalidParams("command must be a string")
    return await ls.run_tests_command(command)


@server.command("toolgate.reportDiagnostics")
def report_diagnostics(ls: ToolgateServer, *args: Any) -> dict[str, Any]:
    """The client reports other language servers' diagnostics for edited files."""
    params = _object_arg(args, "toolgate.reportDiagnostics")
    uri = params.get("uri")
    diagnostics = params.get("diagnostics")
    if not isinstance(uri, str) or not isinstance(diagnostics, list):
        raise JsonRpcInvalidParams('toolgate.reportDiagnostics needs [{"uri", "diagnostics": []}]')
    ls.editor.reports_diagnostics = True
    ls.other_diagnostics[uri] = [d for d in diagnostics if isinstance(d, dict)]
    for future in ls._diag_waiters.pop(uri, []):
        if not future.done():
            future.set_result(None)
    return {"ok": True}


@server.feature(types.SHUTDOWN)
async def shutdown(ls: ToolgateServer, *args: Any) -> None:
    """Cancel the run and stop the embedded model."""
    ls.cancel_run("the editor is shutting down")
    if ls.endpoint is not None and ls.endpoint.close is not None:
        await ls.endpoint.close()
        ls.endpoint = None


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
