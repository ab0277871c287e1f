"""What the reviewer needs of the editor on the other end: a small editor-client protocol.

The language server implements it; the reviewer depends on this, never on the server, so the
two no longer import each other and a reviewer can be driven by any object that does these
few things (apply an edit, notify, ask, save, read a document's text and version, and say what
the client can do).
"""

from __future__ import annotations

from typing import Any, Protocol

from lsprotocol import types

from toolgate.lsp.arguments import ReportedDiagnostic

SAVE_DOCUMENTS = "toolgate/saveDocuments"


class EditorClient(Protocol):
    """The editor, as the reviewer sees it."""

    @property
    def confirm_in_editor(self) -> bool:
        """Whether proposals are confirmed in the editor's own preview (change annotations)."""
        ...

    @property
    def reports_diagnostics(self) -> bool:
        """Whether the client reports its diagnostics after an edit lands."""
        ...

    def supports_apply_edit(self) -> bool:
        """Whether the client takes `workspace/applyEdit`."""
        ...

    def supports_annotations(self) -> bool:
        """Whether the client shows change annotations that need confirmation."""
        ...

    def supports_document_changes(self) -> bool:
        """Whether the client takes `documentChanges` (versioned edits)."""
        ...

    def supports_create_file(self) -> bool:
        """Whether the client can create a file inside an edit."""
        ...

    def notify(self, method: str, params: Any) -> None:
        """Send a notification (secrets redacted)."""
        ...

    async def ask(self, message: str, actions: list[str], *, warning: bool = False) -> str | None:
        """Ask the person (`window/showMessageRequest`); the chosen title, None if dismissed."""
        ...

    async def open_external(self, uri: str) -> bool:
        """Have the client open a page in the person's browser; whether it did.

        `window/showDocument` with `external`; False when the client cannot.
        """
        ...

    async def save(self, uris: list[str], timeout: float) -> list[str]:
        """Ask the client to save documents (`toolgate/saveDocuments`); the uris it saved.

        Raises when the client cannot save or does not answer in time.
        """
        ...

    async def apply_edit(
        self, edit: types.WorkspaceEdit, label: str
    ) -> types.ApplyWorkspaceEditResult:
        """Send `workspace/applyEdit` and wait for its answer."""
        ...

    def open_text(self, uri: str) -> str | None:
        """The text of an open document, or None when it is not open."""
        ...

    def open_version(self, uri: str) -> int | None:
        """The version of an open document, or None when it is not open."""
        ...

    async def wait_for_change(
        self, uri: str, version: int | None, timeout: float = 3.0
    ) -> str | None:
        """The document's text once its version moves past `version` (None on timeout)."""
        ...

    async def reported_diagnostics(self, uri: str, timeout: float) -> list[ReportedDiagnostic]:
        """The diagnostics the client reports for `uri` next (empty on timeout)."""
        ...

    def last_reported(self, uri: str) -> list[ReportedDiagnostic] | None:
        """What the client last reported for `uri`, without waiting (None: never reported)."""
        ...
