"""Proposals: the diffs a person reviews, hunk by hunk, before any change lands."""

from toolgate.review.diff import Hunk
from toolgate.review.proposal import Proposal, ProposalStatus, Resolution, make_proposal

__all__ = ["Hunk", "Proposal", "ProposalStatus", "Resolution", "make_proposal"]
