"""A proposal: one gated file change, its diff and hunks, and what became of it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from toolgate.records import new_id
from toolgate.review.diff import Hunk, apply_hunks, diff_texts, locate, split_lines
from toolgate.review.problems import Problem


class ProposalStatus(str, Enum):
    """Where a proposal stands."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    PARTIALLY_ACCEPTED = "partially_accepted"
    REJECTED = "rejected"
    STALE = "stale"
    CANCELLED = "cancelled"


@dataclass
class Proposal:
    """A change to one file that waits for the person."""

    id: str
    run_id: str
    call_id: str
    tool: str
    path: str  # workspace-relative POSIX path
    original: str  # text the diff is against ("" for a new file)
    proposed: str
    diff: str
    hunks: list[Hunk]
    is_new_file: bool = False
    why: str = ""
    status: ProposalStatus = ProposalStatus.PENDING
    reason: str | None = None
    hunks_applied: list[int] = field(default_factory=list)

    def text_with(self, selected: set[int] | None = None) -> str:
        """The file's text with the selected hunks applied (all when None)."""
        if selected is None or set(range(len(self.hunks))) <= selected:
            return self.proposed
        return apply_hunks(self.original, self.hunks, selected)

    def rebase(self, current: str) -> Proposal | None:
        """The same change against the person's newer text, or None when a hunk no longer fits."""
        if current == self.original:
            return self
        if self.is_new_file:
            return None
        lines = split_lines(current)
        moved: list[Hunk] = []
        taken: list[tuple[int, int]] = []
        for hunk in self.hunks:
            at = locate(lines, hunk.old_lines, hunk.start)
            if at is None:
                return None
            span = (at, at + len(hunk.old_lines))
            if any(span[0] < end and start < span[1] for start, end in taken):
                return None
            taken.append(span)
            moved.append(replace(hunk, start=span[0], end=span[1]))
        proposed = apply_hunks(current, moved)
        return make_proposal(
            run_id=self.run_id,
            call_id=self.call_id,
            tool=self.tool,
            path=self.path,
            original=current,
            proposed=proposed,
            why=self.why,
            proposal_id=self.id,
        )


@dataclass
class Resolution:
    """What the person decided about a proposal, and what actually landed."""

    status: ProposalStatus
    hunks_applied: list[int] = field(default_factory=list)
    reason: str | None = None
    message: str | None = None  # extra facts for the model, e.g. files that differ from disk
    error: str | None = None  # nothing landed because applying failed, not by the person's choice
    rule: str | None = None  # set when a rule refused the change and no person was asked
    # What the editor's other language servers report in the file after the change, that they
    # did not before it (review/problems.py).
    problems: list[Problem] = field(default_factory=list)

    @property
    def landed(self) -> bool:
        """Whether any part of the change is now in the file."""
        return self.status in (ProposalStatus.ACCEPTED, ProposalStatus.PARTIALLY_ACCEPTED)


def make_proposal(
    *,
    run_id: str,
    call_id: str,
    tool: str,
    path: str,
    original: str | None,
    proposed: str,
    why: str = "",
    proposal_id: str | None = None,
) -> Proposal:
    """Build a proposal with its diff and hunks."""
    is_new = original is None
    before = original or ""
    diff = diff_texts(before, proposed, path, new_file=is_new)
    return Proposal(
        id=proposal_id or new_id("proposal"),
        run_id=run_id,
        call_id=call_id,
        tool=tool,
        path=path,
        original=before,
        proposed=proposed,
        diff=diff.text,
        hunks=diff.hunks,
        is_new_file=is_new,
        why=why,
    )
