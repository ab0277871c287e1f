"""implement_code: the agent implements a task; the result is the diff of what landed."""

from __future__ import annotations

from typing import Any

from toolgate.agent_tools.jobs import Job, run_result
from toolgate.records import ToolResult


def implement_task(arguments: dict[str, Any]) -> str:
    """The task the model is given, from the tool's arguments."""
    lines = [f"Implement this in the workspace: {arguments['task_description'].strip()}"]
    criteria = arguments.get("acceptance_criteria") or []
    if criteria:
        lines += ["", "Acceptance criteria:", *(f"- {c}" for c in criteria)]
    files = arguments.get("context_files") or []
    if files:
        lines += ["", "Read these files first: " + ", ".join(files)]
    lines += ["", "When you are done, say in a few lines what you changed and why."]
    return "\n".join(lines)


async def implement_code(job: Job, arguments: dict[str, Any]) -> ToolResult:
    """Run the agent on the task; data: the unified diff and the files changed."""
    job.check_paths(list(arguments.get("context_files") or []))
    report = await job.run_agent(implement_task(arguments), job.reviewer())
    result = run_result(report)
    if result.success and not report.changes:
        result.suggestions.append("the run changed no file; see its summary for why")
    return result
