"""Code review by the model: `review_code`, answered against its output schema.

Not to be confused with `toolgate.review`, which holds the proposals the person reviews.

    from toolgate.code_review import ReviewRequest, review_changes
    review = await review_changes(ReviewRequest(diff=text), settings)
    review.approved, review.comments, review.metrics
"""

from toolgate.code_review.ask import review_changes
from toolgate.code_review.changes import Changes, working_tree_changes
from toolgate.code_review.records import (
    CodeReview,
    ReviewComment,
    ReviewError,
    ReviewRequest,
    ReviewSetupError,
)
from toolgate.code_review.tool import REVIEW_CODE

__all__ = [
    "REVIEW_CODE",
    "Changes",
    "CodeReview",
    "ReviewComment",
    "ReviewError",
    "ReviewRequest",
    "ReviewSetupError",
    "review_changes",
    "working_tree_changes",
]
