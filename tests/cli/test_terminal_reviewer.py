"""The terminal reviewer, driven through its input and output streams."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from toolgate.cli.terminal import TerminalReviewer
from toolgate.review.proposal import ProposalStatus, make_proposal
from toolgate.review.reviewer import ApprovalRequest
from toolgate.workspace import Workspace

ORIGINAL = "".join(f"line {i}\n" for i in range(1, 21))
PROPOSED = ORIGINAL.replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n")


def _reviewer(root: Path, answers: str, colour: bool = False) -> TerminalReviewer:
    return TerminalReviewer(
        Workspace(root), out=io.StringIO(), inp=io.StringIO(answers), colour=colour
    )


def _proposal(root: Path):  # type: ignore[no-untyped-def]
    (root / "f.txt").write_text(ORIGINAL)
    return make_proposal(
        run_id="r",
        call_id="c",
        tool="write_file",
        path="f.txt",
        original=ORIGINAL,
        proposed=PROPOSED,
        why="spell the numbers",
    )


async def test_yes_applies_and_shows_the_diff(tmp_path: Path) -> None:
    reviewer = _reviewer(tmp_path, "y\n")
    proposal = _proposal(tmp_path)
    assert len(proposal.hunks) == 2
    resolution = await reviewer.review_change(proposal)
    assert resolution.status == ProposalStatus.ACCEPTED
    assert (tmp_path / "f.txt").read_text() == PROPOSED
    shown = reviewer.out.getvalue()
    assert "-line 2" in shown and "+line two" in shown
    assert "why: spell the numbers" in shown and "\033[" not in shown


@pytest.mark.parametrize(
    ("answer", "reason"), [("n\n", None), ("\n", None), ("too clever\n", "too clever")]
)
async def test_no_or_a_reason_rejects(tmp_path: Path, answer: str, reason: str | None) -> None:
    reviewer = _reviewer(tmp_path, answer)
    resolution = await reviewer.review_change(_proposal(tmp_path))
    assert resolution.status == ProposalStatus.REJECTED
    assert resolution.reason == reason
    assert (tmp_path / "f.txt").read_text() == ORIGINAL


async def test_hunk_by_hunk(tmp_path: Path) -> None:
    reviewer = _reviewer(tmp_path, "h\nn\ny\nkeep the 2\n")
    resolution = await reviewer.review_change(_proposal(tmp_path))
    assert resolution.status == ProposalStatus.PARTIALLY_ACCEPTED
    assert resolution.hunks_applied == [1]
    assert resolution.reason == "keep the 2"
    text = (tmp_path / "f.txt").read_text()
    assert "line 2\n" in text and "line nineteen\n" in text and "line two" not in text
    shown = reviewer.out.getvalue()
    assert "Apply hunk 1/2?" in shown and "Apply hunk 2/2?" in shown


async def test_colour_when_asked(tmp_path: Path) -> None:
    reviewer = _reviewer(tmp_path, "n\n", colour=True)
    await reviewer.review_change(_proposal(tmp_path))
    assert "\033[32m+line two" in reviewer.out.getvalue()


@pytest.mark.parametrize(
    ("answer", "approved", "reason"),
    [
        ("y\n", True, None),
        ("yes\n", True, None),
        ("n\n", False, None),
        ("not today\n", False, "not today"),
    ],
)
async def test_confirm_a_command(
    tmp_path: Path, answer: str, approved: bool, reason: str | None
) -> None:
    reviewer = _reviewer(tmp_path, answer)
    approval = await reviewer.confirm(
        ApprovalRequest(
            run_id="r",
            call_id="c",
            tool="run_tests",
            summary="make deploy",
            why="ship it",
            off_allow_list=True,
        )
    )
    assert (approval.approved, approval.reason) == (approved, reason)
    shown = reviewer.out.getvalue()
    assert "run_tests (not on the allow-list): make deploy" in shown
    assert "why: ship it" in shown


async def test_h_on_a_one_hunk_change_asks_before_applying(tmp_path: Path) -> None:
    (tmp_path / "g.txt").write_text("old\n")
    proposal = make_proposal(
        run_id="r",
        call_id="c",
        tool="write_file",
        path="g.txt",
        original="old\n",
        proposed="new\n",
        why="",
    )
    assert len(proposal.hunks) == 1
    reviewer = _reviewer(tmp_path, "h\nn\n\n")
    resolution = await reviewer.review_change(proposal)
    assert resolution.status == ProposalStatus.REJECTED
    assert "Apply hunk 1/1?" in reviewer.out.getvalue()
    assert (tmp_path / "g.txt").read_text() == "old\n"
