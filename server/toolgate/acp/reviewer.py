"""The gate's Reviewer in ACP's words: `session/request_permission`, `fs/write_text_file`.

ACP has no word for hunks: a change is allowed or rejected whole. `allow_always` is
remembered per tool for the one session that answered it, and never offered for a command
off the allow-list (such a command is asked for by its exact argv each time).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from acp import RequestError
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AllowedOutcome,
    ElicitationCapabilities,
    ElicitationFormSessionMode,
    ElicitationMode,
    ElicitationSchema,
    ElicitationUrlSessionMode,
    PermissionOption,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallUpdate,
)
from pydantic import AnyUrl, ValidationError

from toolgate.acp import convert
from toolgate.mcp.oauth import default_show
from toolgate.review.proposal import Proposal, ProposalStatus, Resolution
from toolgate.review.questions import Question, Reply
from toolgate.review.reviewer import Approval, ApprovalRequest, DiskReviewer
from toolgate.workspace import PathRefused, Workspace

log = logging.getLogger(__name__)

ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE = "allow_once", "allow_always", "reject_once"


def _options(always: bool) -> list[PermissionOption]:
    options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow", kind="allow_once")]
    if always:
        options.append(
            PermissionOption(
                option_id=ALLOW_ALWAYS, name="Allow always (this session)", kind="allow_always"
            )
        )
    options.append(PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"))
    return options


class AcpReviewer(DiskReviewer):
    """Asks the editor through `session/request_permission`; writes through it when it can."""

    def __init__(
        self,
        workspace: Workspace,
        conn: AgentSideConnection,
        session_id: str,
        *,
        always: set[str],
        write_through_client: bool,
        flush: Callable[[], Awaitable[None]],
        show: Callable[[ToolCallProgress], None] = lambda update: None,
        ids: Callable[[str], str] = lambda call_id: call_id,
        elicitation: ElicitationCapabilities | None = None,
    ) -> None:
        super().__init__(workspace)
        self.elicitation = elicitation  # the client's forms and pages, if it has them
        # The editor's text of the files read through fs/read_text_file, by real path.
        self.buffers: dict[Path, str] = {}
        workspace.buffers = lambda: self.buffers
        self.conn = conn
        self.session_id = session_id
        self.always = always  # tools the person allowed for the rest of this session
        self.write_through_client = write_through_client
        self._flush = flush  # the call's `tool_call` update goes out before its question
        self._show = show  # an update of the call, in order with the run's other updates
        self._id = ids  # the engine's call id → the one the editor knows
        self._pending: set[asyncio.Future[None]] = set()  # sign-in pages being offered

    async def answer(self, question: Question) -> Reply:
        """A server's question (MCP elicitation), through the client's own elicitation.

        A form, or a page to visit, when the client declared that kind; else declined.
        """
        caps = self.elicitation
        try:
            if question.url is not None:
                if not (caps and caps.url):
                    return Reply("decline")
                mode: ElicitationMode = ElicitationUrlSessionMode(
                    session_id=self.session_id,
                    elicitation_id=uuid.uuid4().hex,
                    url=AnyUrl(question.url),
                )
            else:
                if not (caps and caps.form):
                    return Reply("decline")
                mode = ElicitationFormSessionMode(
                    session_id=self.session_id,
                    requested_schema=ElicitationSchema.model_validate(question.schema),
                )
            await self._flush()
            response = await self.conn.create_elicitation(
                f"{question.asker} asks: {question.message}", mode
            )
        except (ConnectionError, RequestError, ValidationError) as exc:
            log.warning("could not ask the client about a server's question: %s", exc)
            return Reply("decline")
        if response.action == "accept":
            return Reply("accept", dict(getattr(response, "content", None) or {}))
        return Reply("cancel" if response.action == "cancel" else "decline")

    async def open_url(self, url: str, server: str) -> None:
        """A sign-in page for `server`: the client opens it (URL elicitation) when it can.

        Else the terminal's way: printed on stderr, opened in the system's browser.
        """
        if not (self.elicitation and self.elicitation.url):
            await default_show(server)(url)
            return
        mode = ElicitationUrlSessionMode(
            session_id=self.session_id, elicitation_id=uuid.uuid4().hex, url=AnyUrl(url)
        )

        async def ask() -> None:
            try:
                await self.conn.create_elicitation(f"Sign in to {server}", mode)
            except (ConnectionError, RequestError) as exc:
                log.warning("could not have the client open the sign-in page: %s", exc)
                await default_show(server)(url)

        # Not awaited: the sign-in's answer comes to the loopback redirect, not from here.
        self._pending.add(asyncio.ensure_future(ask()))
        self._pending = {task for task in self._pending if not task.done()}

    async def before_read(self, path: str) -> None:
        """Put the editor's text of a file into the buffers (the read then sees it)."""
        try:
            real = self.workspace.resolve(path)  # nothing outside the root reaches the client
        except PathRefused:
            return  # the read itself refuses it, with its own message
        try:
            response = await self.conn.read_text_file(session_id=self.session_id, path=str(real))
        except (ConnectionError, RequestError) as exc:
            # No such buffer or file in the editor: the read goes to disk as usual.
            log.debug("fs/read_text_file %s: %s", real, exc)
            self.buffers.pop(real, None)
            return
        self.buffers[real] = response.content

    async def _ask(self, update: ToolCallUpdate, offer_always: bool) -> str | None:
        """The option chosen, or None when the turn was cancelled or the client is gone."""
        await self._flush()
        try:
            response = await self.conn.request_permission(
                session_id=self.session_id, tool_call=update, options=_options(offer_always)
            )
        except (ConnectionError, RequestError) as exc:
            log.warning("permission request failed: %s", exc)
            return None
        outcome = response.outcome
        if isinstance(outcome, AllowedOutcome):
            return outcome.option_id
        return None

    def _diff(self, proposal: Proposal) -> convert.ToolContent:
        original = None if proposal.is_new_file else proposal.original
        return convert.diff_content(self.workspace.root, proposal.path, original, proposal.proposed)

    async def review_change(self, proposal: Proposal) -> Resolution:
        """Ask about the whole change with its diff; write it when allowed."""
        if proposal.tool in self.always:
            return await self.apply_change(proposal)
        content: list[convert.ToolContent] = [self._diff(proposal)]
        if proposal.why:
            content.append(convert.text_content(proposal.why))
        update = ToolCallUpdate(
            tool_call_id=self._id(proposal.call_id),
            title=f"{proposal.tool} {proposal.path}",
            kind="edit",
            status="pending",
            content=content,
            locations=[ToolCallLocation(path=str(self.workspace.root / proposal.path))],
        )
        choice = await self._ask(update, offer_always=True)
        if choice is None:
            return Resolution(ProposalStatus.CANCELLED, [], "the person cancelled the turn")
        if choice == REJECT_ONCE:
            return Resolution(ProposalStatus.REJECTED, [], "the person rejected the change")
        if choice == ALLOW_ALWAYS:
            self.always.add(proposal.tool)
        return await self.write_change(proposal)

    async def apply_change(self, proposal: Proposal) -> Resolution:
        """Write a change nobody is asked about, showing its diff in the call."""
        update = convert.progress(self._id(proposal.call_id), "in_progress", [self._diff(proposal)])
        self._show(update)
        return await self.write_change(proposal)

    async def write_change(self, proposal: Proposal) -> Resolution:
        """Through `fs/write_text_file` when the editor offers it (it lands in its buffer)."""
        if not self.write_through_client:
            return self.write(proposal, None, None)
        try:
            # The sandbox first: nothing outside the root ever reaches the client.
            real = self.workspace.resolve(proposal.path, for_write=True)
            self.workspace.check_size(proposal.path, proposal.proposed)
        except PathRefused as exc:
            return Resolution(ProposalStatus.REJECTED, [], None, error=str(exc))
        try:
            await self.conn.write_text_file(
                session_id=self.session_id, path=str(real), content=proposal.proposed
            )
        except (ConnectionError, RequestError) as exc:
            return Resolution(
                ProposalStatus.REJECTED, [], None, error=f"the editor could not write it: {exc}"
            )
        return Resolution(ProposalStatus.ACCEPTED, list(range(len(proposal.hunks))), None)

    async def confirm(self, request: ApprovalRequest) -> Approval:
        """Ask about a command or git operation by its exact argv."""
        if request.tool in self.always and not request.off_allow_list:
            return Approval(True)
        text = request.summary + (" (not on the allow-list)" if request.off_allow_list else "")
        content = [convert.text_content(text)]
        if request.why:
            content.append(convert.text_content(request.why))
        update = ToolCallUpdate(
            tool_call_id=self._id(request.call_id),
            title=f"{request.tool}: {request.summary}",
            kind=convert.kind_of(request.kind),
            status="pending",
            content=content,  # type: ignore[arg-type]  # the SDK validates plain dicts
        )
        choice = await self._ask(update, offer_always=not request.off_allow_list)
        if choice is None:
            return Approval(False, "the person cancelled the turn")
        if choice == REJECT_ONCE:
            return Approval(False, "the person refused it")
        if choice == ALLOW_ALWAYS and not request.off_allow_list:
            self.always.add(request.tool)
        return Approval(True)
