"""Applying the chosen hunks of a proposal to a file's current text: the one place it is done.

Every path that lands a change (the disk reviewers, the language server's reviewer, a change
the policy lets through without review) works out the new text here, so staleness and
rebasing mean the same everywhere. Writing the text is left to the caller.
"""

from __future__ import annotations

from collections.abc import Collection

from toolgate.review.proposal import Proposal
from toolgate.workspace import normalise_newlines


class StaleProposal(Exception):
    """The file changed since the proposal was made and the change no longer fits it."""


def chosen_hunks(proposal: Proposal, selected: Collection[int] | None) -> set[int]:
    """The hunks to apply: all when `selected` is None, else those of `selected` that exist."""
    every = set(range(len(proposal.hunks)))
    return every if selected is None else every & set(selected)


def rebased_onto(proposal: Proposal, current: str | None) -> Proposal:
    """The proposal as it applies to `current` (None: no such file); raises StaleProposal.

    A new file's proposal fits a missing file or a blank one: an editor's buffer of a file not
    yet on disk holds nothing, or one newline (Neovim), which is no edit of the person's.
    """
    now = normalise_newlines(current) if current is not None else None
    if proposal.is_new_file:
        if now is None or not now.strip():
            return proposal
        raise StaleProposal(f"{proposal.path} was created since the proposal was made")
    if now is None:
        raise StaleProposal(f"{proposal.path} was deleted since the proposal was made")
    rebased = proposal.rebase(now)
    if rebased is None:
        raise StaleProposal(f"{proposal.path} changed and the proposed change no longer applies")
    return rebased


def apply_chosen(current: str | None, proposal: Proposal, selected: Collection[int] | None) -> str:
    """The new text of the file: the chosen hunks (all when None) applied to `current`.

    Raises StaleProposal when `current` moved away from the proposal's original so far that a
    hunk no longer fits.
    """
    fitted = rebased_onto(proposal, current)
    return fitted.text_with(chosen_hunks(fitted, selected))
