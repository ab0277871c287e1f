"""generate_documentation: a run that may write documentation and nothing else.

Its reviewer refuses any change outside the documentation: a Markdown, reStructuredText,
AsciiDoc or text file, anything under `docs/`, and for `docstrings` the given Python files
when the change leaves their code as it was (compared as syntax trees without docstrings;
comments are not in the tree). Commands and git are denied for the run.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath
from typing import Any

from toolgate.agent_tools.jobs import Job, run_result
from toolgate.python_source import parse_python
from toolgate.records import ToolResult
from toolgate.review.proposal import Proposal
from toolgate.tools.builtins import builtin_tools
from toolgate.tools.schema import GIT, RUN

DOC_SUFFIXES = (".md", ".markdown", ".rst", ".adoc", ".txt")
_WITH_DOCSTRINGS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)

_ASKED = {
    "docstrings": "Write or improve the docstrings (and comments where they explain why) of "
    "{files}. Change nothing but docstrings and comments.",
    "readme": "Write or update README.md for {files}: what it does, how to use it, an example.",
    "api_reference": "Write an API reference for {files} as Markdown under docs/: every public "
    "function and class, its parameters, what it returns and raises.",
    "guide": "Write a short guide for {files} as Markdown under docs/: the concepts, then a "
    "worked example.",
}


def _without_docstrings(source: str) -> str:
    tree = parse_python(source)
    for node in ast.walk(tree):
        if isinstance(node, _WITH_DOCSTRINGS) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def is_doc_file(path: str) -> bool:
    """Whether a workspace-relative path is documentation by its name."""
    pure = PurePosixPath(path)
    return pure.suffix.lower() in DOC_SUFFIXES or (pure.parts[:1] == ("docs",))


def docs_only(code_files: list[str], doc_type: str) -> Any:
    """The constraint a documentation run's changes are held to."""
    documented = set(code_files) if doc_type == "docstrings" else set()

    def check(proposal: Proposal) -> str | None:
        if is_doc_file(proposal.path):
            return None
        if proposal.path not in documented:
            return (
                f"generate_documentation may only write documentation; {proposal.path} is "
                "neither a documentation file nor one of the files to document"
            )
        if not proposal.path.endswith(".py"):
            return (
                "only Python files can be checked to change nothing but docstrings: "
                f"{proposal.path}"
            )
        try:
            same = _without_docstrings(proposal.original) == _without_docstrings(proposal.proposed)
        except SyntaxError as exc:
            return (
                f"the change would leave {proposal.path} unparsable: {exc.msg} (line {exc.lineno})"
            )
        if not same:
            return (
                f"the change to {proposal.path} alters its code, not only docstrings and "
                "comments; documentation runs may not change code"
            )
        return None

    return check


def _commands_and_git() -> list[str]:
    """The built-ins a documentation job may not call: commands and git (the tests it may run)."""
    return [
        tool.name
        for tool in builtin_tools()
        if tool.kind == GIT or (tool.kind == RUN and "tests.run" not in tool.capabilities)
    ]


async def generate_documentation(job: Job, arguments: dict[str, Any]) -> ToolResult:
    """Run the agent on the documentation task; data: the diff and the files written."""
    files = list(arguments["code_files"])
    job.check_paths(files)
    doc_type = str(arguments.get("doc_type") or "docstrings")
    config = job.config
    config.policy.deny_tools = sorted(set(config.policy.deny_tools) | set(_commands_and_git()))
    task = _ASKED[doc_type].format(files=", ".join(files)) + (
        "\nWhen you are done, say in a few lines what you documented."
    )
    report = await job.run_agent(task, job.reviewer(docs_only(files, doc_type)), config)
    return run_result(report, {"doc_type": doc_type})
