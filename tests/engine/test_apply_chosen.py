"""Applying chosen hunks: one function, and every writer lands the same text through it."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolgate.review.apply import StaleProposal, apply_chosen, chosen_hunks
from toolgate.review.proposal import Proposal, ProposalStatus, make_proposal
from toolgate.review.reviewer import DiskReviewer
from toolgate.tools.activity import ActivityContext, ActivitySettings
from toolgate.tools.builtins import EditFile, WriteFile
from toolgate.workspace import Workspace

ORIGINAL = "".join(f"line {i}\n" for i in range(40))
PROPOSED = ORIGINAL.replace("line 3\n", "LINE 3\n").replace("line 30\n", "LINE 30\n")


def _proposal(original: str | None = ORIGINAL, proposed: str = PROPOSED) -> Proposal:
    return make_proposal(
        run_id="r",
        call_id="c",
        tool="write_file",
        path="a.txt",
        original=original,
        proposed=proposed,
    )


def test_chosen_hunks_of_the_current_text() -> None:
    proposal = _proposal()
    assert len(proposal.hunks) == 2
    assert apply_chosen(ORIGINAL, proposal, None) == PROPOSED
    assert apply_chosen(ORIGINAL, proposal, {1}) == ORIGINAL.replace("line 30\n", "LINE 30\n")
    assert apply_chosen(ORIGINAL, proposal, set()) == ORIGINAL
    # An index that does not exist is no hunk at all.
    assert chosen_hunks(proposal, {0, 7}) == {0}


def test_text_the_person_changed_elsewhere_is_kept() -> None:
    current = "top\n" + ORIGINAL.replace("line 20\n", "twenty\n")
    new = apply_chosen(current, _proposal(), None)
    assert new == "top\n" + PROPOSED.replace("line 20\n", "twenty\n")
    # CRLF from an editor's buffer is read as the same lines.
    assert apply_chosen(ORIGINAL.replace("\n", "\r\n"), _proposal(), {0}) == ORIGINAL.replace(
        "line 3\n", "LINE 3\n"
    )


def test_a_hunk_that_no_longer_fits_is_stale() -> None:
    with pytest.raises(StaleProposal, match="a.txt"):
        apply_chosen(ORIGINAL.replace("line 3\n", "three\n"), _proposal(), None)
    with pytest.raises(StaleProposal, match="deleted"):
        apply_chosen(None, _proposal(), None)


def test_a_new_file_fits_a_missing_or_blank_file_only() -> None:
    new = _proposal(None, "fresh\n")
    assert apply_chosen(None, new, None) == "fresh\n"
    assert apply_chosen("\n", new, None) == "fresh\n"  # Neovim's buffer of a missing file
    with pytest.raises(StaleProposal, match="created"):
        apply_chosen("someone else's\n", new, None)


class _Choose(DiskReviewer):
    def __init__(self, workspace: Workspace, hunks: set[int]) -> None:
        super().__init__(workspace)
        self.hunks = hunks

    async def decide(self, proposal: Proposal) -> tuple[set[int] | None, str | None]:
        return self.hunks, None


async def test_the_disk_reviewer_writes_what_apply_chosen_gives(tmp_path: Path) -> None:
    current = "top\n" + ORIGINAL
    (tmp_path / "a.txt").write_text(current)
    resolution = await _Choose(Workspace(tmp_path), {1}).review_change(_proposal())
    assert resolution.status == ProposalStatus.PARTIALLY_ACCEPTED
    assert resolution.hunks_applied == [1]
    assert (tmp_path / "a.txt").read_text() == apply_chosen(current, _proposal(), {1})
    (tmp_path / "a.txt").write_text(ORIGINAL.replace("line 30\n", "thirty\n"))
    stale = await _Choose(Workspace(tmp_path), {0, 1}).review_change(_proposal())
    assert stale.status == ProposalStatus.STALE
    assert (tmp_path / "a.txt").read_text() == ORIGINAL.replace("line 30\n", "thirty\n")


async def test_unreviewed_writes_land_through_the_same_path(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(ORIGINAL)
    ctx = ActivityContext(workspace=Workspace(tmp_path), settings=ActivitySettings())
    edited = await EditFile().run(ctx, {"path": "a.txt", "search": "line 3\n", "replace": "X\n"})
    assert edited.success and (tmp_path / "a.txt").read_text() == ORIGINAL.replace(
        "line 3\n", "X\n"
    )
    written = await WriteFile().run(ctx, {"path": "deep/new.txt", "content": "fresh\n"})
    assert written.success and (tmp_path / "deep/new.txt").read_text() == "fresh\n"
    missing = await EditFile().run(ctx, {"path": "a.txt", "search": "nowhere", "replace": "x"})
    assert not missing.success and "not found" in (missing.error or "")
