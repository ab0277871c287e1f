"""Reviewers that stand in for the person in engine-level tests."""

from __future__ import annotations

from toolgate.review.reviewer import Approval, ApprovalRequest, AutoReviewer
from toolgate.workspace import Workspace


class Approving(AutoReviewer):
    """Says yes to everything it is asked, recording the questions."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self.asked: list[ApprovalRequest] = []

    async def confirm(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        return Approval(True)
