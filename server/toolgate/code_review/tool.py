"""`review_code`, the latent tool: its interface, with no activity behind it.

The model answers it itself against the output schema (`toolgate.code_review.ask`); the
arguments are the design's: the diff, the files it touches, the coding standards and the focus.
Inside a run the diff may be left out (`toolgate.code_review.latent`).
"""

from __future__ import annotations

from toolgate.schemas import CODE_REVIEW, load_schema
from toolgate.tools.schema import Tool

_TEXT_OR_LIST = {
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
}

REVIEW_CODE = Tool(
    name="review_code",
    description=(
        "Review a code change: whether it may go in, and comments on the lines they are about "
        "(path, line, severity, message, suggestion)."
    ),
    parameters={
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "diff": {
                "type": "string",
                "description": "The unified diff to review. Leave it out to review what you "
                "changed so far in this task (else the working tree's changes).",
            },
            "files_changed": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Workspace-relative paths the diff touches (else read from it).",
            },
            "coding_standards": {
                **_TEXT_OR_LIST,
                "description": "Rules the change is held to.",
            },
            "review_focus": {
                **_TEXT_OR_LIST,
                "description": "What to look at first, e.g. security, performance, tests.",
            },
        },
    },
    output=load_schema(CODE_REVIEW),
    capabilities=("code.review",),
    label="reviewed the changes",
)
