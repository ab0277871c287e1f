"""What a code review is asked about and what it answers: the request, comments, the verdict.

The answer's shape is the published schema `code-review.schema.json`; `parse_review` reads a
model's answer into a `CodeReview`, forgiving what a model writes loosely (a severity named
`critical`, a line given as `"12"`) and refusing what cannot be read (a missing verdict, a
comment without a path).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolgate.model.structured import nesting_depth
from toolgate.schemas import CODE_REVIEW, first_error

SEVERITIES = ("error", "warning", "info", "hint")
# Names models use for severities, read as the schema's own.
_SEVERITY_ALIASES = {
    "critical": "error",
    "blocker": "error",
    "high": "error",
    "major": "error",
    "bug": "error",
    "medium": "warning",
    "minor": "warning",
    "warn": "warning",
    "low": "info",
    "information": "info",
    "note": "info",
    "suggestion": "hint",
    "nit": "hint",
    "nitpick": "hint",
    "style": "hint",
}


class ReviewError(Exception):
    """No review could be had; the message says why in one line."""


class ReviewSetupError(ReviewError):
    """The review cannot be asked for: a matter of set-up, not of the model.

    No endpoint, an unconfirmed base URL (configuration), or no changes to show (not a git
    repository).
    """


@dataclass
class ReviewRequest:
    """What to review: the diff, the files it touches, and what the reviewer should hold it to.

    `diff` is a unified diff (git's, or a proposal's); `files_changed` the workspace-relative
    paths it touches (read from the diff when empty); `coding_standards` the rules to hold the
    change to; `review_focus` what to look at first (e.g. "security", "tests").
    """

    diff: str
    files_changed: list[str] = field(default_factory=list)
    coding_standards: str = ""
    review_focus: list[str] = field(default_factory=list)

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> ReviewRequest:
        """The request from `review_code`'s arguments (strings or lists where either is natural).

        Raises ReviewError when `diff` is missing or not text.
        """
        diff = arguments.get("diff")
        if not isinstance(diff, str):
            raise ReviewError("review_code needs `diff`: the unified diff to review")
        return cls(
            diff=diff,
            files_changed=_strings(arguments.get("files_changed")),
            coding_standards="\n".join(_strings(arguments.get("coding_standards"))),
            review_focus=_strings(arguments.get("review_focus")),
        )


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)]


@dataclass
class ReviewComment:
    """One comment on one line of the changed code."""

    path: str
    line: int  # 1-based, in the file as changed
    severity: str  # error | warning | info | hint
    message: str
    suggestion: str | None = None  # the text that should replace the line, when there is one

    def to_dict(self) -> dict[str, Any]:
        """The comment as the schema writes it."""
        return {
            "path": self.path,
            "line": self.line,
            "severity": self.severity,
            "message": self.message,
            "suggestion": self.suggestion,
        }


@dataclass
class CodeReview:
    """The verdict, the comments on the lines they are about, and figures about the change.

    `metrics` holds the model's own figures plus what the review itself counted: `comments`,
    one count per severity, `llm_calls` and `output` (`structured` or `text`: how the answer
    was asked for).
    """

    approved: bool
    comments: list[ReviewComment] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The review as the schema writes it (the `data` of `review_code`)."""
        return {
            "approved": self.approved,
            "comments": [c.to_dict() for c in self.comments],
            "metrics": dict(self.metrics),
        }

    def summary(self) -> str:
        """One line: the verdict and the count of comments by severity."""
        counts = [
            f"{n} {severity}{'s' if n != 1 else ''}"
            for severity in SEVERITIES
            if (n := sum(1 for c in self.comments if c.severity == severity))
        ]
        verdict = "approved" if self.approved else "not approved"
        return f"{verdict}: {', '.join(counts) if counts else 'no comments'}"

    def comment_lines(self) -> list[str]:
        """Each comment as `path:line severity message`, its suggestion on the lines after it.

        The form editors' error lists and `grep` read.
        """
        lines = []
        for c in self.comments:
            lines.append(f"{c.path}:{c.line} {c.severity} {c.message}")
            lines.extend(f"    suggested: {line}" for line in (c.suggestion or "").splitlines())
        return lines

    def feedback(self) -> str:
        """The comments as text a model can act on (the review loop's next implementation turn)."""
        lines = [f"- {c.path}:{c.line} [{c.severity}] {c.message}" for c in self.comments]
        for c in self.comments:
            if c.suggestion:
                lines.append(f"  suggested for {c.path}:{c.line}: {c.suggestion}")
        return "\n".join(lines) or "(no comments)"


def parse_review(doc: Any, *, max_nesting: int = 32) -> CodeReview:
    """A model's answer read as a review; raises ReviewError saying what is wrong with it.

    `max_nesting` is `tool_calling.max_argument_depth`: an answer nesting deeper is refused.
    """
    if nesting_depth(doc) > max_nesting:
        raise ReviewError(
            f"the answer nests deeper than {max_nesting} levels (tool_calling.max_argument_depth)"
        )
    if not isinstance(doc, dict):
        raise ReviewError("the answer must be one JSON object")
    doc = _normalised(doc)
    problem = first_error(CODE_REVIEW, doc)
    if problem is not None:
        where, what = problem
        raise ReviewError(f"{where}: {what}")
    comments = [
        ReviewComment(
            path=c["path"].strip().removeprefix("./"),
            line=c["line"],
            severity=c["severity"],
            message=c["message"].strip(),
            suggestion=c.get("suggestion"),
        )
        for c in doc["comments"]
    ]
    return CodeReview(doc["approved"], comments, dict(doc.get("metrics") or {}))


def _normalised(doc: dict[str, Any]) -> dict[str, Any]:
    """The answer with loose spellings read as the schema's (nothing is made up)."""
    doc = dict(doc)
    if isinstance(doc.get("approved"), str) and doc["approved"].lower() in ("true", "false"):
        doc["approved"] = doc["approved"].lower() == "true"
    if doc.get("metrics") is None:
        doc.pop("metrics", None)
    comments = doc.get("comments")
    if comments is None:
        doc["comments"] = comments = []
    if not isinstance(comments, list):
        return doc
    fixed: list[Any] = []
    for comment in comments:
        if isinstance(comment, dict):
            comment = dict(comment)
            if "file" in comment and "path" not in comment:
                comment["path"] = comment.pop("file")
            line = comment.get("line")
            if isinstance(line, str) and line.strip().isdigit():
                comment["line"] = int(line)
            severity = comment.get("severity")
            if isinstance(severity, str):
                key = severity.strip().lower()
                comment["severity"] = _SEVERITY_ALIASES.get(key, key)
            elif "severity" not in comment:
                comment["severity"] = "warning"
            suggestion = comment.get("suggestion")
            if isinstance(suggestion, str) and not suggestion.strip():
                comment["suggestion"] = None
        fixed.append(comment)
    doc["comments"] = fixed
    return doc
