"""The agent tools' names, descriptions and input schemas, as any front end offers them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolgate.tools.schema import object_schema

_PATHS = {"type": "array", "items": {"type": "string", "minLength": 1}}
# One rule or focus as a string, or several as a list (as code_review's own tool takes them).
_TEXT_OR_LIST = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}


@dataclass(frozen=True)
class AgentToolSpec:
    """One agent tool as a client sees it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False


IMPLEMENT_CODE = AgentToolSpec(
    name="implement_code",
    description=(
        "Have Toolgate's agent implement a task in the workspace. Every change it makes passes "
        "Toolgate's gate (the person may be asked to approve it). Returns the unified diff of "
        "what landed and the files changed; the run can be undone with `toolgate undo RUN_ID`."
    ),
    input_schema=object_schema(
        {
            "task_description": {
                "type": "string",
                "minLength": 1,
                "description": "What to build or change, in plain words.",
            },
            "acceptance_criteria": {
                **_PATHS,
                "description": "Conditions the result must meet, one per item.",
                "default": [],
            },
            "context_files": {
                **_PATHS,
                "description": "Workspace-relative files the agent should read first.",
                "default": [],
            },
        },
        ["task_description"],
    ),
)

REVIEW_CODE = AgentToolSpec(
    name="review_code",
    description=(
        "Review a change: approved or not, comments with path, line, severity, message and a "
        "suggestion, and metrics. Reviews the given unified diff, or the working tree's diff "
        "against HEAD when none is given. Changes nothing."
    ),
    input_schema=object_schema(
        {
            "diff": {
                "type": "string",
                "description": "A unified diff; empty: the working tree's changes against HEAD.",
                "default": "",
            },
            "files_changed": {
                **_PATHS,
                "description": "The files the diff touches.",
                "default": [],
            },
            "coding_standards": {
                **_TEXT_OR_LIST,
                "description": "Rules the code must follow (default: the [review] config's).",
            },
            "review_focus": {
                **_TEXT_OR_LIST,
                "description": "What to look at first, e.g. security, performance, tests.",
            },
        },
        [],
    ),
    read_only=True,
)

RUN_TESTS = AgentToolSpec(
    name="run_tests",
    description=(
        "Run the workspace's tests through Toolgate's runner (allow-listed commands only, in "
        "its OS sandbox where available) and return total, passed, failed, skipped, the "
        "duration, each failure with file and line, and the line coverage when asked."
    ),
    input_schema=object_schema(
        {
            "test_scope": {
                "type": "string",
                "description": "A test file, folder or node id (default: the whole suite).",
                "default": "",
            },
            "test_commands": {
                **_PATHS,
                "description": "pytest commands on the allow-list (default: pytest -q).",
                "default": [],
            },
            "coverage_required": {
                "type": "boolean",
                "description": "Also measure line coverage (needs pytest-cov where tests run).",
                "default": False,
            },
        },
        [],
    ),
    read_only=True,
)

REFACTOR_CODE = AgentToolSpec(
    name="refactor_code",
    description=(
        "Have Toolgate's agent refactor code without changing its behaviour, then run the "
        "tests; when they fail after the refactoring, every file it changed is restored from "
        "the run's checkpoint and the result names them."
    ),
    input_schema=object_schema(
        {
            "file_path": {
                "type": "string",
                "minLength": 1,
                "description": "The workspace-relative file to refactor.",
            },
            "refactoring_type": {
                "type": "string",
                "minLength": 1,
                "description": "What to do, e.g. extract_function, rename, simplify, "
                "remove_duplication.",
            },
            "target_scope": {
                "type": "string",
                "description": "A function, class or line range inside the file (default: all).",
                "default": "",
            },
        },
        ["file_path", "refactoring_type"],
    ),
)

DOC_TYPES = ("docstrings", "readme", "api_reference", "guide")

GENERATE_DOCUMENTATION = AgentToolSpec(
    name="generate_documentation",
    description=(
        "Have Toolgate's agent document code. The run may only write documentation: Markdown "
        "or reStructuredText files, and for `docstrings` the docstrings and comments of the "
        "given Python files (a change to their code is refused)."
    ),
    input_schema=object_schema(
        {
            "code_files": {
                **_PATHS,
                "minItems": 1,
                "description": "The workspace-relative files to document.",
            },
            "doc_type": {
                "enum": list(DOC_TYPES),
                "description": "docstrings in the files, a README, an API reference or a guide.",
                "default": "docstrings",
            },
        },
        ["code_files"],
    ),
)

SPECS = (IMPLEMENT_CODE, REVIEW_CODE, RUN_TESTS, REFACTOR_CODE, GENERATE_DOCUMENTATION)
