"""refactor_code: the agent refactors, the tests judge it, and a failing refactoring is undone.

The files come back from the run's own checkpoint through `agent.undo`, byte for byte; the
undo is recorded like any other (so `toolgate undo` can bring the refactoring back).
"""

from __future__ import annotations

from typing import Any

from toolgate.agent.checkpoints import CheckpointError
from toolgate.agent.undo import apply_undo, plan_undo
from toolgate.agent_tools.jobs import Job, run_result
from toolgate.agent_tools.testrun import run_suite
from toolgate.records import ToolResult


def refactor_task(arguments: dict[str, Any]) -> str:
    """The task the model is given, from the tool's arguments."""
    scope = str(arguments.get("target_scope") or "").strip()
    where = f"{scope} in {arguments['file_path']}" if scope else arguments["file_path"]
    return (
        f"Refactor {where}: {arguments['refactoring_type']}.\n"
        "Keep the behaviour exactly as it is: the existing tests must still pass, and callers "
        "elsewhere must keep working (update them if a name changes). Do not add features.\n"
        "When you are done, say in a few lines what you changed."
    )


async def refactor_code(job: Job, arguments: dict[str, Any]) -> ToolResult:
    """Refactor, run the tests, and restore the run's files when the tests fail after it."""
    job.check_paths([arguments["file_path"]])
    report = await job.run_agent(refactor_task(arguments), job.reviewer())
    result = run_result(report)
    data = result.data
    data["changes"] = {
        "files": len(report.changes),
        "lines_added": sum(c.added for c in report.changes),
        "lines_removed": sum(c.removed for c in report.changes),
    }
    if not report.changes:
        data["tests"] = None
        data["rolled_back"] = False
        return result
    job.call.progress("running the tests after the refactoring")
    suite = await run_suite(job, [])
    data["tests"] = suite.data()
    data["rolled_back"] = False
    if suite.passed:
        return result
    workspace = job.workspace()
    try:
        plan = plan_undo(workspace, report.run_id)
    except CheckpointError as exc:
        result.success = False
        result.error = (
            f"the tests fail after the refactoring ({suite.error()}) and it could not be "
            f"undone: {exc}"
        )
        return result
    undo = apply_undo(workspace, plan)
    restored = [item.path for item in plan.changes]
    left = [item.path for item in plan.conflicts]
    data.update(rolled_back=True, restored_files=restored, undo_run_id=undo.run_id)
    if left:
        data["left_alone"] = left
    result.success = False
    result.error = (
        f"the tests fail after the refactoring ({suite.error()}); restored from run "
        f"{report.run_id}'s checkpoint: {', '.join(restored) or 'nothing'}"
    )
    result.suggestions += [
        f"{failure.get('test_id')} failed at {failure.get('file')}:{failure.get('line')}"
        for failure in suite.failures[:10]
    ]
    result.suggestions.append(
        f"`toolgate undo {undo.run_id}` brings the refactoring back to look at it"
    )
    return result
