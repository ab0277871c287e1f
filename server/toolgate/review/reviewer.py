"""The Reviewer port: the one seam between the engine and the person's front end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from toolgate.review.apply import StaleProposal, apply_chosen, chosen_hunks
from toolgate.review.proposal import Proposal, ProposalStatus, Resolution
from toolgate.review.questions import Question, Reply, by_default
from toolgate.workspace import PathRefused, Workspace


@dataclass(frozen=True)
class ApprovalRequest:
    """A gated call that is not a file diff: git operations and commands."""

    run_id: str
    call_id: str
    tool: str
    summary: str  # what will happen, e.g. the argv or the commit message
    why: str = ""
    off_allow_list: bool = False  # a command no blanket approval may cover
    kind: str = "other"  # what the tool does (toolgate.tools.schema.KINDS): run, git, …


@dataclass(frozen=True)
class Approval:
    """The person's answer to an ApprovalRequest."""

    approved: bool
    reason: str | None = None
    rule: str | None = None  # set when a rule answered and no person was asked


@runtime_checkable
class Reviewer(Protocol):
    """Implemented by the language server, the terminal, and the tests."""

    async def review_change(self, proposal: Proposal) -> Resolution:
        """Show a proposed change, wait for the person, apply what they accept."""
        ...

    async def apply_change(self, proposal: Proposal) -> Resolution:
        """Apply a change the policy approved (through the editor when there is one)."""
        ...

    async def confirm(self, request: ApprovalRequest) -> Approval:
        """Ask yes or no about a gated call that is not a file diff."""
        ...

    async def before_tests(self) -> list[str]:
        """Make sure accepted changes are on disk before tests run; notes for the model."""
        ...


class DiskReviewer:
    """Applies accepted changes by writing them to disk atomically; subclasses decide."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    async def decide(self, proposal: Proposal) -> tuple[set[int] | None, str | None]:
        """Which hunks the person accepts (None = all; empty set = rejected), and a reason."""
        return set(), "no reviewer"

    async def review_change(self, proposal: Proposal) -> Resolution:
        """Ask, then write what was accepted."""
        accepted, reason = await self.decide(proposal)
        if accepted is not None and not accepted:
            return Resolution(ProposalStatus.REJECTED, [], reason)
        return self.write(proposal, accepted, reason)

    async def apply_change(self, proposal: Proposal) -> Resolution:
        """Write the whole change."""
        return self.write(proposal, None, None)

    def write(
        self, proposal: Proposal, accepted: set[int] | None, reason: str | None
    ) -> Resolution:
        """Write the accepted hunks to disk; a proposal made stale by the disk is not applied."""
        try:
            _, current = self.workspace.read_or_none(proposal.path)
        except (PathRefused, OSError) as exc:
            return Resolution(ProposalStatus.REJECTED, [], None, error=str(exc))
        try:
            text = apply_chosen(current.text if current else None, proposal, accepted)
        except StaleProposal as exc:
            return Resolution(ProposalStatus.STALE, [], str(exc))
        chosen = chosen_hunks(proposal, accepted)
        try:
            self.workspace.write(proposal.path, text, like=current)
        except (PathRefused, OSError) as exc:
            return Resolution(ProposalStatus.REJECTED, [], None, error=f"could not write: {exc}")
        status = (
            ProposalStatus.ACCEPTED
            if accepted is None or chosen == chosen_hunks(proposal, None)
            else ProposalStatus.PARTIALLY_ACCEPTED
        )
        return Resolution(status, sorted(chosen), reason)

    async def confirm(self, request: ApprovalRequest) -> Approval:
        """Refuse by default."""
        return Approval(False, "no reviewer")

    async def answer(self, question: Question) -> Reply:
        """A server's question (MCP elicitation): declined, as nobody is asked here."""
        return Reply("decline")

    async def before_tests(self) -> list[str]:
        """Disk is the only truth here: nothing to sync."""
        return []


class AutoReviewer(DiskReviewer):
    """Approves every change and every confirmable call (`--approve auto`)."""

    async def decide(self, proposal: Proposal) -> tuple[set[int] | None, str | None]:
        """Accept everything."""
        return None, None

    async def confirm(self, request: ApprovalRequest) -> Approval:
        """Approve, except a command off the allow-list, which needs a person's explicit yes."""
        if request.off_allow_list:
            return Approval(
                False,
                "commands off the allow-list need a person's explicit yes; "
                "auto-approval never covers them",
                rule="--approve auto",
            )
        return Approval(True)

    async def answer(self, question: Question) -> Reply:
        """A server's question: its form's defaults, when they fill it; else declined."""
        return by_default(question)


class DenyReviewer(DiskReviewer):
    """Refuses every gated call (`--approve deny`, and when nobody is at the terminal)."""

    async def review_change(self, proposal: Proposal) -> Resolution:
        """Reject everything, saying that a rule did, not a person."""
        return Resolution(
            ProposalStatus.REJECTED,
            [],
            "gated changes are refused in this session",
            rule="--approve deny",
        )

    async def confirm(self, request: ApprovalRequest) -> Approval:
        """Reject everything, saying that a rule did, not a person."""
        return Approval(False, "gated calls are refused in this session", rule="--approve deny")
