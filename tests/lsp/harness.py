"""A small editor for driving the language server over real stdio with pytest-lsp.

It keeps open buffers with versions, applies `workspace/applyEdit` to them (sending the
incremental `didChange` a real editor would), answers `toolgate/saveDocuments` and
`window/showMessageRequest`, and records Toolgate's notifications.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pygls.protocol.json_rpc import JsonRPCResponseMessage
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import LanguageClient, LanguageClientProtocol
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

# Toolgate's own notifications, each recorded by the editor below.
EVENT = "toolgate/event"
PROPOSAL = "toolgate/proposal"
SESSION_CHANGED = "toolgate/sessionChanged"
PROPOSAL_RESOLVED = "toolgate/proposalResolved"


class PlainCodeActionProtocol(LanguageClientProtocol):
    """Reads `textDocument/codeAction` results as plain JSON, as a real editor does.

    lsprotocol reads every code action that carries a command as a bare `Command`, losing its
    kind and diagnostics; an editor sees the JSON itself.
    """

    def get_result_type(self, method: str) -> type[Any] | None:
        if method == types.TEXT_DOCUMENT_CODE_ACTION:
            return JsonRPCResponseMessage
        return super().get_result_type(method)


class EditorClient(LanguageClient):
    """pytest-lsp's test client, noting which sections the server pulls settings for."""

    def __init__(self) -> None:
        super().__init__(protocol_cls=PlainCodeActionProtocol, converter_factory=default_converter)
        self.config_pulls: list[str | None] = []
        self.registrations: list[types.Registration] = []
        # What the editor does with `window/showDocument` (a page in the browser, say);
        # pytest-lsp's own answer when unset.
        self.on_show_document: Callable[[types.ShowDocumentParams], bool] | None = None


def _configuration(client: EditorClient, params: types.ConfigurationParams) -> Any:
    """pytest-lsp's own answer to `workspace/configuration`, each pull noted first."""
    client.config_pulls.extend(item.section for item in params.items)
    return DEFAULT_CLIENT_FEATURES[types.WORKSPACE_CONFIGURATION](client, params)


def _register_capability(client: EditorClient, params: types.RegistrationParams) -> None:
    """Take a dynamic registration, as an editor does, and note it."""
    client.registrations.extend(params.registrations)


def _show_document(
    client: EditorClient, params: types.ShowDocumentParams
) -> types.ShowDocumentResult:
    """Show a document (or a page), as the test's editor does; pytest-lsp's answer otherwise."""
    if client.on_show_document is None:
        return DEFAULT_CLIENT_FEATURES[types.WINDOW_SHOW_DOCUMENT](client, params)  # type: ignore[no-any-return]
    return types.ShowDocumentResult(success=client.on_show_document(params))


def make_client() -> EditorClient:
    """The test client, built as pytest-lsp documents for replacing one of its handlers."""
    client = EditorClient()
    register_lsp_features(
        client,
        {
            **DEFAULT_CLIENT_FEATURES,
            types.WORKSPACE_CONFIGURATION: _configuration,
            types.CLIENT_REGISTER_CAPABILITY: _register_capability,
            types.WINDOW_SHOW_DOCUMENT: _show_document,
        },
    )
    return client


def _consume(future: asyncio.Future[Any]) -> None:
    """Read a finished future's outcome, so an exception no one awaited is not reported."""
    if not future.cancelled():
        future.exception()


def uri_of(path: Path) -> str:
    return from_fs_path(str(path)) or ""


def _offset(text: str, pos: types.Position) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: pos.line]) + pos.character


def apply_text_edits(text: str, edits: list[Any]) -> str:
    ordered = sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    )
    for edit in ordered:
        start, end = _offset(text, edit.range.start), _offset(text, edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


@dataclass
class Editor:
    """The client side of the tests."""

    client: LanguageClient
    root: Path
    buffers: dict[str, tuple[str, int]] = field(default_factory=dict)
    proposals: list[dict[str, Any]] = field(default_factory=list)
    resolved: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    session_changes: list[dict[str, Any]] = field(default_factory=list)
    edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    apply_result: bool = True
    answer: str | None = "Allow"
    save_supported: bool = True
    # Which text edits of an applied edit land (a preview where the person unticks some).
    keep_edits: Callable[[list[Any]], list[Any]] | None = None
    questions: list[str] = field(default_factory=list)
    save_requests: list[list[str]] = field(default_factory=list)
    # Called with each window/showMessageRequest before it is answered (the person acting).
    on_question: Callable[[str], None] | None = None
    # Seconds between answering an applied edit and reporting the change (Neovim debounces
    # `didChange` by 150 ms); 0 reports it at once.
    report_delay: float = 0.0

    @property
    def config_pulls(self) -> list[str | None]:
        """The sections of each `workspace/configuration` item the server asked for."""
        return self.client.config_pulls if isinstance(self.client, EditorClient) else []

    def install(self) -> None:
        client = self.client

        @client.feature(PROPOSAL)
        def _proposal(params: Any) -> None:
            self.proposals.append(_plain(params))

        @client.feature(PROPOSAL_RESOLVED)
        def _resolved(params: Any) -> None:
            self.resolved.append(_plain(params))

        @client.feature(EVENT)
        def _event(params: Any) -> None:
            self.events.append(_plain(params))

        @client.feature(SESSION_CHANGED)
        def _session_changed(params: Any) -> None:
            self.session_changes.append(_plain(params))

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def _apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            self.edits.append(params)
            if not self.apply_result:
                return types.ApplyWorkspaceEditResult(applied=False)
            for change in params.edit.document_changes or []:
                if isinstance(change, types.CreateFile):
                    path = Path(to_fs_path(change.uri) or "")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    if not path.exists():
                        path.write_text("")
                elif isinstance(change, types.DeleteFile):
                    Path(to_fs_path(change.uri) or "").unlink(missing_ok=True)
                    self.buffers.pop(change.uri, None)
                elif isinstance(change, types.TextDocumentEdit):
                    self._apply_document_edit(change.text_document.uri, list(change.edits))
            # Clients without `documentChanges` support get the plain `changes` map.
            for uri, edits in (params.edit.changes or {}).items():
                self._apply_document_edit(uri, list(edits))
            return types.ApplyWorkspaceEditResult(applied=True)

        @client.feature("toolgate/saveDocuments")
        def _save(params: Any) -> dict[str, Any]:
            data = _plain(params)
            self.save_requests.append(list(data.get("uris", [])))
            if not self.save_supported:
                raise RuntimeError("not supported")
            saved = []
            for uri in data.get("uris", []):
                if uri in self.buffers:
                    Path(to_fs_path(uri) or "").write_text(self.buffers[uri][0])
                    saved.append(uri)
            return {"saved": saved}

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def _ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
            self.questions.append(params.message)
            if self.on_question is not None:
                self.on_question(params.message)
            return types.MessageActionItem(title=self.answer) if self.answer else None

    def _apply_document_edit(self, uri: str, edits: list[Any]) -> None:
        if self.keep_edits is not None:
            edits = self.keep_edits(edits)
        if uri in self.buffers:
            text, version = self.buffers[uri]
            new = apply_text_edits(text, edits)
            if self.report_delay:
                asyncio.get_running_loop().call_later(
                    self.report_delay, lambda: self.change(uri, new, edits=edits, old=text)
                )
            else:
                self.change(uri, new, edits=edits, old=text)
        else:
            path = Path(to_fs_path(uri) or "")
            old = path.read_text() if path.exists() else ""
            path.write_text(apply_text_edits(old, edits))

    # -- buffers ---------------------------------------------------------------------------------

    def open(self, rel: str, text: str | None = None) -> str:
        path = self.root / rel
        uri = uri_of(path)
        content = path.read_text() if text is None else text
        self.buffers[uri] = (content, 1)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=content
                )
            )
        )
        return uri

    def change(
        self, uri: str, new: str, *, edits: list[Any] | None = None, old: str | None = None
    ) -> None:
        """Replace a buffer's text, sending incremental changes when the edits are known."""
        _, version = self.buffers[uri]
        version += 1
        self.buffers[uri] = (new, version)
        if edits and old is not None:
            # Send the edits one by one, bottom-up, as incremental changes.
            ordered = sorted(
                edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
            )
            changes: list[Any] = [
                types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
                for e in ordered
            ]
        else:
            changes = [types.TextDocumentContentChangeWholeDocument(text=new)]
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=changes,
            )
        )

    def text(self, uri: str) -> str:
        return self.buffers[uri][0]

    async def close(self) -> None:
        """Shut the server down as an editor does, and stop the client."""
        await self.client.shutdown_session()
        await self.client.stop()

    # -- waiting ---------------------------------------------------------------------------------

    async def until(
        self, predicate: Callable[[], Any], timeout: float = 20.0, on: str = EVENT
    ) -> None:
        """Wait until `predicate` holds, checking again as each `on` notification arrives.

        Between notifications it checks again every quarter second too, for state outside the
        protocol (files, processes, the scripted model's requests).
        """

        async def check() -> Any:
            return predicate()

        await self._wait(
            check, timeout, on, lambda: f"timed out; events so far: {self.events[-5:]}"
        )

    async def poll(
        self, fetch: Callable[[], Awaitable[Any]], timeout: float = 20.0, on: str = PROPOSAL
    ) -> Any:
        """Ask the server again as each `on` notification arrives (as an editor refreshes its
        lightbulb when something changed) until the answer is truthy; return it."""
        return await self._wait(fetch, timeout, on, lambda: "timed out asking the server")

    async def _wait(
        self,
        check: Callable[[], Awaitable[Any]],
        timeout: float,
        on: str,
        failure: Callable[[], str],
    ) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            # Registered before the check, so a notification in between is not missed. A
            # waiter left pending is replaced by the next one (pytest-lsp keeps one per method).
            arrival = self.client.protocol.wait_for_notification_async(on)
            # Left waiting when the check passes first; the client fails it with the
            # server's exit, which nobody else reads.
            arrival.add_done_callback(_consume)
            value = await check()
            if value:
                return value
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(failure())
            await asyncio.wait([arrival], timeout=min(remaining, 0.25))

    async def proposal(self, n: int = 1) -> dict[str, Any]:
        await self.until(
            lambda: len([p for p in self.proposals if p["status"] == "pending"]) >= n, on=PROPOSAL
        )
        return [p for p in self.proposals if p["status"] == "pending"][n - 1]

    async def finished(self) -> dict[str, Any]:
        await self.until(lambda: any(e["type"] == "run_finished" for e in self.events), 60)
        return next(e for e in self.events if e["type"] == "run_finished")

    async def command(self, name: str, *args: Any) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(args))
        )

    async def request_raw(self, method: str, params: Any) -> Any:
        """A request whose result stays plain JSON (see `PlainCodeActionProtocol`)."""
        return _plain(await self.client.protocol.send_request_async(method, params))

    async def code_actions(
        self,
        uri: str,
        line: int = 0,
        end_line: int | None = None,
        diagnostics: list[Any] | None = None,
    ) -> list[dict[str, Any]]:
        """`textDocument/codeAction` over whole lines, as plain JSON."""
        end = line if end_line is None else end_line
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=line, character=0),
                end=types.Position(line=end, character=0),
            ),
            context=types.CodeActionContext(diagnostics=list(diagnostics or [])),
        )
        return list(await self.request_raw(types.TEXT_DOCUMENT_CODE_ACTION, params) or [])


def _plain(value: Any) -> Any:
    """Notification params arrive as attrs-like objects; make them plain JSON."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "__dict__"):
        return {k: _plain(v) for k, v in vars(value).items() if not k.startswith("_")}
    return value
