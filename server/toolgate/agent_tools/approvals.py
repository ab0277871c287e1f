"""Who approves a change inside an agent tool: the calling host's person, or the server's rule.

A change the gate would ask about goes to the person through the front end's `Ask` port (MCP
elicitation) when the client can ask; otherwise the server's `--approve` decides (`deny` by
default). Every refusal is kept with its reason, so the tool's result can say what was held
back and how to let it through.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from toolgate.review.proposal import Proposal, ProposalStatus, Resolution
from toolgate.review.questions import Question, Reply, by_default
from toolgate.review.reviewer import Approval, ApprovalRequest, DiskReviewer
from toolgate.workspace import Workspace

APPROVE_CHOICES = ("deny", "auto")
# How the gate names the rule that refused a change the agent tool's own job may not make.
CONSTRAINT_RULE = "the agent tool's own limits"


@dataclass(frozen=True)
class Answer:
    """The person's answer to one question.

    `chosen`: of the question's parts, the ones the person ticked (None: all of them).
    """

    approved: bool
    reason: str | None = None
    chosen: frozenset[int] | None = None


class Ask(Protocol):
    """Asks the calling host's person one yes-or-no question (title, then the details).

    `parts`, when there are two or more, may each be ticked or not: a change's hunks.
    """

    def __call__(self, title: str, details: str, parts: Sequence[str] = ()) -> Awaitable[Answer]:
        """Wait for the person's answer."""
        ...


# Refuses a proposal the job may not make (a reason), or lets it go to the person (None).
Constraint = Callable[[Proposal], "str | None"]


@dataclass
class Refusal:
    """A gated change or call that did not happen, and why."""

    what: str
    reason: str
    by_person: bool


class HostReviewer(DiskReviewer):
    """The Reviewer of an agent tool's run: the host's person, else the server's rule."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        ask: Ask | None = None,
        approve: str = "deny",
        constraint: Constraint | None = None,
    ) -> None:
        if approve not in APPROVE_CHOICES:
            raise ValueError(f"approve must be one of {APPROVE_CHOICES}, got {approve!r}")
        super().__init__(workspace)
        self.ask = ask
        self.approve = approve
        self.constraint = constraint
        self.refusals: list[Refusal] = []

    async def review_change(self, proposal: Proposal) -> Resolution:
        """The job's constraint first, then the host's person, else the server's rule."""
        refused = self._constrained(proposal)
        if refused is not None:
            return Resolution(ProposalStatus.REJECTED, [], refused, rule=CONSTRAINT_RULE)
        if self.ask is None:
            accepted, reason = self._by_rule(f"change to {proposal.path}")
            if accepted is not None:
                return Resolution(ProposalStatus.REJECTED, [], reason, rule=self._rule_name)
            return self.write(proposal, None, None)
        return await super().review_change(proposal)

    async def decide(self, proposal: Proposal) -> tuple[set[int] | None, str | None]:
        """Ask the host's person about the change, hunk by hunk when it has several."""
        assert self.ask is not None  # review_change answers by rule when nobody can be asked
        verb = "Create" if proposal.is_new_file else "Change"
        hunks = proposal.hunks if len(proposal.hunks) > 1 else []
        answer = await self.ask(
            f"Toolgate: {verb} {proposal.path}?", proposal.diff, [h.unified() for h in hunks]
        )
        what = f"change to {proposal.path}"
        if not answer.approved or answer.chosen is None:
            return self._answered(what, answer)
        chosen = {hunks[i].index for i in answer.chosen if 0 <= i < len(hunks)}
        if not chosen:
            return self._answered(what, Answer(False, answer.reason or "no hunk was ticked"))
        left = [str(h.index + 1) for h in hunks if h.index not in chosen]
        if left:
            part = f"hunk{'s' if len(left) > 1 else ''} {', '.join(left)} of the {what}"
            reason = answer.reason or "not ticked by the person"
            self.refusals.append(Refusal(part, reason, by_person=True))
        return chosen, answer.reason

    async def apply_change(self, proposal: Proposal) -> Resolution:
        """A change the policy approved: still held to the job's constraint."""
        refused = self._constrained(proposal)
        if refused is not None:
            return Resolution(ProposalStatus.REJECTED, [], refused, rule=CONSTRAINT_RULE)
        return await super().apply_change(proposal)

    async def answer(self, question: Question) -> Reply:
        """An MCP server's question inside the job: the defaults under --approve auto."""
        return by_default(question) if self.approve == "auto" else Reply("decline")

    async def confirm(self, request: ApprovalRequest) -> Approval:
        """A git operation or a command: the person's yes, else the server's rule."""
        what = f"{request.tool}: {request.summary}"
        if self.ask is not None:
            answer = await self.ask(f"Toolgate: allow {request.tool}?", request.summary)
            accepted, reason = self._answered(what, answer)
            return Approval(accepted is None, reason)
        if request.off_allow_list:
            reason = "commands off the allow-list need a person's explicit yes"
            self.refusals.append(Refusal(what, reason, by_person=False))
            return Approval(False, reason, rule="the command allow-list")
        accepted, reason = self._by_rule(what)
        if accepted is None:
            return Approval(True, reason)
        return Approval(False, reason, rule=self._rule_name)

    def _constrained(self, proposal: Proposal) -> str | None:
        reason = self.constraint(proposal) if self.constraint is not None else None
        if reason is not None:
            self.refusals.append(Refusal(f"change to {proposal.path}", reason, by_person=False))
        return reason

    def _answered(self, what: str, answer: Answer) -> tuple[set[int] | None, str | None]:
        if answer.approved:
            return None, answer.reason
        reason = answer.reason or "rejected by the person"
        self.refusals.append(Refusal(what, reason, by_person=True))
        return set(), reason

    @property
    def _rule_name(self) -> str:
        return f"--approve {self.approve}"

    def _by_rule(self, what: str) -> tuple[set[int] | None, str | None]:
        if self.approve == "auto":
            return None, None
        reason = (
            "refused: the MCP client cannot ask its person (it does not support elicitation) "
            "and this server runs with --approve deny"
        )
        self.refusals.append(Refusal(what, reason, by_person=False))
        return set(), reason

    def suggestions(self) -> list[str]:
        """What the caller can do about the refusals, one line each."""
        lines = [f"{r.what} was refused: {r.reason}" for r in self.refusals]
        if any(not r.by_person and "elicitation" in r.reason for r in self.refusals):
            lines.append(
                "to approve changes, call from an MCP client that supports elicitation, or "
                "start the server with `toolgate mcp --agent-tools --approve auto`"
            )
        return lines
