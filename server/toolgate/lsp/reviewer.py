"""The language server's side of the Reviewer port: proposals become edits the editor applies."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from toolgate.lsp.arguments import ReportedDiagnostic
from toolgate.lsp.client import EditorClient
from toolgate.lsp.convert import (
    hunk_edits,
    path_to_uri,
    proposal_payload,
    uri_to_path,
    whole_text_range,
)
from toolgate.review.apply import StaleProposal, apply_chosen, chosen_hunks, rebased_onto
from toolgate.review.problems import Problem, new_problems
from toolgate.review.proposal import Proposal, ProposalStatus, Resolution
from toolgate.review.questions import Question, Reply, defaults
from toolgate.review.reviewer import Approval, ApprovalRequest
from toolgate.workspace import PathRefused, Workspace, decode_text, normalise_newlines
from toolgate.workspace.buffers import difference, same_text

log = logging.getLogger(__name__)

PROPOSAL = "toolgate/proposal"
PROPOSAL_RESOLVED = "toolgate/proposalResolved"
# How long a run waits for the client's report of an accepted edit's file. Longer than VS Code's
# own wait for its other language servers (4 s and a settle), so a slow checker on a loaded
# machine is still heard; a client that reports at once costs nothing.
REPORT_WAIT_SECONDS = 6.0


class ReviewError(Exception):
    """A command about a proposal that cannot be carried out (unknown id, bad hunks)."""


def shown(value: str, limit: int = 80) -> str:
    """A value the client sent, quoted for an error message and cut so as not to echo megabytes."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


@dataclass
class Pending:
    """A proposal waiting for the person, and the future the run waits on."""

    proposal: Proposal
    future: asyncio.Future[Resolution]
    busy: bool = False  # an accept is being applied
    settling: bool = False  # applied; waiting for the editor's diagnostics of the result


@dataclass
class LspReviewer:
    """Sends proposals to the editor and applies accepted hunks with workspace/applyEdit."""

    client: EditorClient  # the editor, through the small protocol it offers the reviewer
    workspace: Workspace
    pending: dict[str, Pending] = field(default_factory=dict)
    # Accepted text that may still sit unsaved in editor buffers: path → text.
    accepted_unsaved: dict[Path, str] = field(default_factory=dict)
    # The version its buffer had when the edit was sent (None: no buffer was open).
    sent_versions: dict[Path, int | None] = field(default_factory=dict)
    # What the client last reported of a file before an edit was sent to it: uri → problems
    # (None: the client never reported the file, and every problem after the edit is new).
    before_problems: dict[str, list[Problem] | None] = field(default_factory=dict)

    # -- the Reviewer port ----------------------------------------------------------------------

    async def review_change(self, proposal: Proposal) -> Resolution:
        """Announce the proposal and wait for accept, reject, staleness or cancel."""
        future: asyncio.Future[Resolution] = asyncio.get_running_loop().create_future()
        self.pending[proposal.id] = Pending(proposal, future)
        self._announce(proposal)
        if self.client.confirm_in_editor and self.client.supports_annotations():
            # The editor's own preview is the review: send the confirmable edit right away.
            asyncio.ensure_future(self._accept_in_editor(proposal.id))
        try:
            return await future
        except asyncio.CancelledError:
            self._resolve(proposal.id, Resolution(ProposalStatus.CANCELLED, [], "run cancelled"))
            raise
        finally:
            self.pending.pop(proposal.id, None)

    async def apply_change(self, proposal: Proposal) -> Resolution:
        """Apply an auto-approved change, still through the editor so it joins undo."""
        self._announce(proposal, status="accepted")
        resolution = await self._apply(proposal, None, confirm=False)
        self.client.notify(PROPOSAL_RESOLVED, self._resolved_payload(proposal, resolution))
        if resolution.landed:
            resolution.problems = await self._problems_caused(proposal)
        return resolution

    async def confirm(self, request: ApprovalRequest) -> Approval:
        """Ask with window/showMessageRequest (Allow / Deny)."""
        warn = " It is not on the allow-list." if request.off_allow_list else ""
        why = f" Why: {request.why}" if request.why else ""
        message = f"Toolgate wants to run {request.tool}: {request.summary}.{warn}{why}"
        try:
            choice = await self.client.ask(
                message, ["Allow", "Deny"], warning=request.off_allow_list
            )
        except Exception as exc:  # a client that cannot ask means no
            return Approval(False, f"the editor could not ask the person: {exc}")
        if choice == "Allow":
            return Approval(True)
        return Approval(
            False,
            "the person denied it" if choice is not None else "the person dismissed the question",
        )

    async def answer(self, question: Question) -> Reply:
        """A server's question (MCP elicitation): send the form's defaults, if the person says so.

        The editor shows no forms: a form its defaults do not fill is declined.
        """
        values = defaults(question) if question.url is None else None
        if values is None:
            return Reply("decline")
        shown = ", ".join(f"{k} = {v!r}" for k, v in values.items()) or "nothing"
        try:
            choice = await self.client.ask(
                f"Toolgate: {question.asker} asks: {question.message} (answer: {shown})",
                ["Send", "Decline"],
            )
        except Exception as exc:  # a client that cannot ask means no
            log.debug("could not ask about a server's question: %s", exc)
            return Reply("decline")
        return Reply("accept", values) if choice == "Send" else Reply("decline")

    async def open_url(self, url: str, server: str) -> None:
        """A sign-in page: opened by the editor in the person's browser, else shown to copy."""
        try:
            if await self.client.open_external(url):
                return
        except Exception as exc:
            log.debug("window/showDocument failed: %s", exc)
        self.client.notify(
            "window/showMessage",
            {"type": 3, "message": f"Toolgate: sign in to {server} in your browser: {url}"},
        )

    async def ask_to_save(self, uris: list[str]) -> set[str]:
        """Ask the client to save documents (`toolgate/saveDocuments`); the ones it saved."""
        try:
            saved = set(await self.client.save(uris, timeout=10))
        except Exception:
            log.debug("the client cannot save documents")
            return set()
        for uri in saved:
            path = uri_to_path(uri)
            if path is not None:
                self.accepted_unsaved.pop(path, None)
                self.sent_versions.pop(path, None)
        return saved

    async def before_tests(self) -> list[str]:
        """Get accepted edits onto disk before tests, commands or git read it; say what differs.

        A client that saves is asked first; then each file is checked on disk, saved or not
        (a client may say it saved what never reached the disk). A buffer that holds the
        accepted text as editors report it (a final newline more or less, CRLF) is written by
        the server; only one the person typed in keeps the disk as it was.
        """
        if not self.accepted_unsaved:
            return []
        accepted, self.accepted_unsaved = self.accepted_unsaved, {}
        await self.ask_to_save([path_to_uri(p) for p in accepted])
        notes = []
        for path, expected in accepted.items():
            name = self.workspace.relative(path)
            sent = self.sent_versions.pop(path, None)
            try:
                # Decoded as every read of the workspace is (BOMs, legacy encodings).
                disk = decode_text(path.read_bytes()).text if path.exists() else None
            except (OSError, ValueError):
                disk = None
            if disk is not None and same_text(disk, expected):
                continue
            buffer = await self._reported(path_to_uri(path), sent)
            if buffer is None or same_text(buffer, expected):
                # Nothing else in the buffer: the accepted text is what disk should hold.
                try:
                    self.workspace.write(name, expected)
                except (PathRefused, OSError) as exc:
                    notes.append(f"{name}: could not save the accepted change: {exc}")
                continue
            kept = "stays as it was" if path.exists() else "does not exist yet"
            notes.append(
                f"{name} was not saved: the person changed it in the editor after accepting "
                f"the change ({difference(buffer, expected)}); on disk it {kept}, and that is "
                "what tests, commands and git read"
            )
        return notes

    async def _reported(self, uri: str, sent: int | None) -> str | None:
        """The editor's text of a file once it reported the accepted edit; None without a buffer.

        Editors answer `workspace/applyEdit` before they report the change (Neovim debounces
        `didChange` by 150 ms): a buffer still at the version the edit was sent to holds the
        edit, not yet reported, not an edit of the person's.
        """
        if sent is not None and self.client.open_version(uri) == sent:
            await self.client.wait_for_change(uri, sent)
            if self.client.open_version(uri) == sent:
                return None  # applied, as the editor answered, and never reported since
        return self.client.open_text(uri)

    # -- commands -----------------------------------------------------------------------------

    async def accept(self, proposal_id: str, hunks: list[int] | None) -> Resolution:
        """The person accepted a proposal, or some of its hunks."""
        entry = self._get(proposal_id)
        if hunks is not None:
            bad = [
                h for h in hunks if not isinstance(h, int) or not 0 <= h < len(entry.proposal.hunks)
            ]
            if bad:
                raise ReviewError(
                    f"proposal {proposal_id} has hunks 0..{len(entry.proposal.hunks) - 1}; "
                    f"no hunk {bad[0]!r}"
                )
            if not hunks:
                raise ReviewError("accept at least one hunk, or reject the proposal")
        entry.busy = True
        try:
            resolution = await self._apply(
                entry.proposal, set(hunks) if hunks is not None else None, confirm=False
            )
        finally:
            entry.busy = False
        self._resolve(proposal_id, resolution)
        return resolution

    def reject(self, proposal_id: str, reason: str | None) -> Resolution:
        """The person rejected a proposal, perhaps saying why."""
        self._get(proposal_id)
        resolution = Resolution(ProposalStatus.REJECTED, [], reason)
        self._resolve(proposal_id, resolution)
        return resolution

    def cancel_all(self, reason: str) -> None:
        """Resolve every pending proposal as cancelled."""
        for proposal_id in list(self.pending):
            self._resolve(proposal_id, Resolution(ProposalStatus.CANCELLED, [], reason))

    def document_changed(self, path: Path, text: str) -> None:
        """The person edited a file: re-base its pending proposals, or mark them stale."""
        for proposal_id, entry in list(self.pending.items()):
            if entry.busy or self.workspace.root / entry.proposal.path != path:
                continue
            current = normalise_newlines(text)
            if current == entry.proposal.original or _blank_buffer_of_new_file(
                entry.proposal, current
            ):
                continue
            rebased = entry.proposal.rebase(current)
            if rebased is None:
                self._resolve(
                    proposal_id,
                    Resolution(
                        ProposalStatus.STALE,
                        [],
                        "the person edited the file and the proposed change no longer applies",
                    ),
                )
                continue
            entry.proposal = rebased
            self._announce(rebased)

    # -- internals ----------------------------------------------------------------------------

    def _get(self, proposal_id: str) -> Pending:
        entry = self.pending.get(proposal_id)
        if entry is None or entry.future.done():
            raise ReviewError(f"no pending proposal with id {shown(proposal_id)}")
        if entry.busy:
            raise ReviewError(f"proposal {proposal_id!r} is being applied")
        return entry

    def _resolve(self, proposal_id: str, resolution: Resolution) -> None:
        entry = self.pending.get(proposal_id)
        if entry is None or entry.future.done() or entry.settling:
            return
        entry.proposal.status = resolution.status
        # The editor hears first: a client reports its diagnostics of the edited file once it
        # knows the proposal landed, and the model's result waits for that report.
        self.client.notify(PROPOSAL_RESOLVED, self._resolved_payload(entry.proposal, resolution))
        if resolution.landed and self.client.reports_diagnostics:
            entry.busy = entry.settling = True
            asyncio.ensure_future(self._settle(entry, resolution))
        else:
            entry.future.set_result(resolution)

    async def _settle(self, entry: Pending, resolution: Resolution) -> None:
        try:
            resolution.problems = await self._problems_caused(entry.proposal)
        finally:
            if not entry.future.done():
                entry.future.set_result(resolution)

    def _resolved_payload(self, proposal: Proposal, resolution: Resolution) -> dict[str, Any]:
        # The file, so that a client can report its diagnostics without keeping the proposal.
        return {
            "id": proposal.id,
            "uri": self._uri(proposal),
            "status": resolution.status.value,
            "hunksApplied": resolution.hunks_applied,
            "reason": resolution.reason,
        }

    def _uri(self, proposal: Proposal) -> str:
        return path_to_uri(self.workspace.root / proposal.path)

    def _announce(self, proposal: Proposal, status: str | None = None) -> None:
        uri = self._uri(proposal)
        payload = proposal_payload(proposal, uri, self.client.open_version(uri))
        if status:
            payload["status"] = status
        self.client.notify(PROPOSAL, payload)

    async def _accept_in_editor(self, proposal_id: str) -> None:
        entry = self.pending.get(proposal_id)
        if entry is None:
            return
        entry.busy = True
        try:
            resolution = await self._apply(entry.proposal, None, confirm=True)
        except Exception as exc:  # the run must hear about it, whatever happened
            resolution = Resolution(
                ProposalStatus.REJECTED, [], None, error=f"could not apply: {exc}"
            )
        finally:
            entry.busy = False
        self._resolve(proposal_id, resolution)

    async def _apply(
        self, proposal: Proposal, selected: set[int] | None, *, confirm: bool
    ) -> Resolution:
        """Send the edit (or write disk when no edit can reach the file) and see what landed."""
        uri = self._uri(proposal)
        real = self.workspace.root / proposal.path
        reported = self.client.last_reported(uri)
        self.before_problems[uri] = None if reported is None else _problems(proposal, reported)
        current = self.client.open_text(uri)
        in_editor = current is not None
        if current is None:
            try:
                _, text_file = self.workspace.read_or_none(proposal.path)
            except (PathRefused, OSError) as exc:
                return Resolution(ProposalStatus.REJECTED, [], None, error=str(exc))
            current = text_file.text if text_file else None
        try:
            proposal = rebased_onto(proposal, current)
            final_text = apply_chosen(current, proposal, selected)
        except StaleProposal:
            return Resolution(
                ProposalStatus.STALE,
                [],
                "the file changed and the proposed change no longer applies",
            )
        all_hunks = set(range(len(proposal.hunks)))
        chosen = chosen_hunks(proposal, selected)
        if not self.client.supports_apply_edit() or (
            proposal.is_new_file and not in_editor and not self.client.supports_create_file()
        ):
            # No edit can reach the file: the editor applies no edits, or the file does not
            # exist and the editor can neither create it nor has a buffer of it (an edit may
            # only change a document that exists). The accepted text is written in one step.
            try:
                self.workspace.write(proposal.path, final_text)
            except (PathRefused, OSError) as exc:
                return Resolution(
                    ProposalStatus.REJECTED, [], None, error=f"could not write: {exc}"
                )
            return _landed(chosen, all_hunks)
        version = self.client.open_version(uri)
        edit = self._workspace_edit(proposal, uri, chosen, current or "", version, confirm)
        try:
            result = await self.client.apply_edit(
                edit, f"Toolgate: {proposal.tool} {proposal.path}"
            )
        except Exception as exc:
            return Resolution(
                ProposalStatus.REJECTED, [], f"the editor failed to apply the edit: {exc}"
            )
        if not result.applied:
            reason = result.failure_reason or (
                "the person discarded the change in the editor"
                if confirm
                else "the editor did not apply the edit"
            )
            return Resolution(ProposalStatus.REJECTED, [], reason)
        if confirm:
            # The person may have applied only some changes in the preview: read what landed.
            landed_text = await self.client.wait_for_change(uri, version)
            chosen = _hunks_that_landed(proposal, landed_text)
            final_text = landed_text if landed_text is not None else final_text
            if not chosen:
                return Resolution(ProposalStatus.REJECTED, [], "no change was applied")
        self.accepted_unsaved[real] = final_text
        self.sent_versions[real] = version
        # A client that can save does so at once (the edit stays in its undo history); for
        # others the server writes the file itself only when tests or git need the disk, so an
        # editor does not find its buffer's file changed under it.
        await self.ask_to_save([uri])
        return _landed(chosen, all_hunks)

    def _workspace_edit(
        self,
        proposal: Proposal,
        uri: str,
        chosen: set[int],
        current: str,
        version: int | None,
        confirm: bool,
    ) -> types.WorkspaceEdit:
        annotation_id = None
        annotations = None
        if self.client.supports_annotations():
            annotation_id = f"toolgate-{proposal.id}"
            annotations = {
                annotation_id: types.ChangeAnnotation(
                    label=f"{proposal.tool}: {proposal.path}",
                    needs_confirmation=confirm,
                    description=proposal.why or None,
                )
            }
        if proposal.is_new_file:
            # Over whatever blank text the new file's buffer holds (Neovim's holds "\n").
            edits: list[Any] = [
                types.TextEdit(range=whole_text_range(current), new_text=proposal.proposed)
            ]
        else:
            edits = hunk_edits(proposal, chosen, current)
        if annotation_id:
            edits = [
                types.AnnotatedTextEdit(
                    range=e.range, new_text=e.new_text, annotation_id=annotation_id
                )
                for e in edits
            ]
        if not self.client.supports_document_changes():
            # Without `documentChanges` the spec allows only the unversioned `changes` map.
            return types.WorkspaceEdit(changes={uri: edits}, change_annotations=annotations)
        text_edit = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=edits,
        )
        changes: list[Any] = []
        if proposal.is_new_file and self.client.supports_create_file():
            changes.append(
                types.CreateFile(
                    uri=uri,
                    options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True),
                    annotation_id=annotation_id,
                )
            )
        changes.append(text_edit)
        return types.WorkspaceEdit(document_changes=changes, change_annotations=annotations)

    async def _problems_caused(self, proposal: Proposal) -> list[Problem]:
        """The problems the client reports after the edit that it did not report before it."""
        uri = self._uri(proposal)
        before = self.before_problems.pop(uri, None)
        if not self.client.reports_diagnostics:
            return []
        after = await self.client.reported_diagnostics(uri, timeout=REPORT_WAIT_SECONDS)
        return new_problems(before, _problems(proposal, after))


def _problems(proposal: Proposal, diagnostics: list[ReportedDiagnostic]) -> list[Problem]:
    """The client's diagnostics of the proposal's file as problems in it."""
    return [
        Problem(
            path=proposal.path,
            line=d.range.start.line + 1,
            message=d.message,
            source=d.source or "",
            severity=_SEVERITIES.get(d.severity or 1, "error"),
        )
        for d in diagnostics
    ]


_SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def _blank_buffer_of_new_file(proposal: Proposal, text: str | None) -> bool:
    """Whether `text` is what an editor shows for a file not yet on disk: nothing, or a newline.

    Neovim's buffer of a file that does not exist holds one empty line, sent as a newline; that is
    no edit of the person's that would make a new file's proposal stale.
    """
    return proposal.is_new_file and text is not None and not text.strip()


def _landed(chosen: set[int], all_hunks: set[int]) -> Resolution:
    status = ProposalStatus.ACCEPTED if chosen == all_hunks else ProposalStatus.PARTIALLY_ACCEPTED
    return Resolution(status, sorted(chosen))


def _hunks_that_landed(proposal: Proposal, text: str | None) -> set[int]:
    if text is None:
        return set(range(len(proposal.hunks)))
    text = normalise_newlines(text)
    if text == proposal.proposed:
        return set(range(len(proposal.hunks)))
    if text == proposal.original:
        return set()
    count = len(proposal.hunks)
    # Few hunks per proposal: find the subset whose application gives exactly this text.
    if count <= 12:
        for mask in range(1 << count):
            subset = {i for i in range(count) if mask >> i & 1}
            if proposal.text_with(subset) == text:
                return subset
    lines = text.splitlines(keepends=True)
    return {
        h.index
        for h in proposal.hunks
        if tuple(lines[h.start : h.start + len(h.new_lines)]) == h.new_lines
    }
