"""Plans in the editor: `toolgate.plan`, its `toolgate/plan` notification, and scaffolding.

`toolgate.scaffoldTool` is the action behind "Scaffold missing tool" on a gap: each gap in the
notification carries the command and arguments that scaffold it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from toolgate.lsp.arguments import (
    DropPlanArguments,
    PlanArguments,
    RunPlanArguments,
    RunWorkflowArguments,
    ScaffoldToolArguments,
)
from toolgate.lsp.convert import path_to_uri
from toolgate.records import new_id

if TYPE_CHECKING:
    from toolgate.lsp.state import ToolgateServer
    from toolgate.session.plan_records import PlanMarks

PLAN_NOTIFICATION = "toolgate/plan"
log = logging.getLogger(__name__)


def register(server: ToolgateServer) -> None:
    """Add the planning commands to the language server."""

    # `ls` is typed Any: pygls and the argument reader resolve a handler's type hints at run
    # time, and the server's class is only known here for type checking.
    @server.command("toolgate.plan")
    async def plan(ls: Any, args: PlanArguments) -> dict[str, Any]:
        """`[{"task", "context"?}]` → the plan with its gaps, also sent as `toolgate/plan`."""
        return await _plan(ls, args)

    @server.command("toolgate.runPlan")
    async def run_plan(ls: Any, args: RunPlanArguments) -> dict[str, Any]:
        """`[{"planId"}]` → `{"runId"}`: the kept plan runs through the gate, reviewed here."""
        return _run_plan(ls, args)

    @server.command("toolgate.dropPlan")
    async def drop_plan(ls: Any, args: DropPlanArguments) -> dict[str, Any]:
        """`[{"planId", "sessionId"?}]` → `{"dropped": true}`: the plan will not run."""
        ls.workspace_root()  # a clear error without a workspace folder
        session_id = _marks(ls).decision(args.session_id, args.plan_id, "dropped")
        return {"planId": args.plan_id, "dropped": True, "sessionId": session_id}

    @server.command("toolgate.runWorkflow")
    async def run_workflow(ls: Any, args: RunWorkflowArguments) -> dict[str, Any]:
        """`[{"name", "inputs"?: {…}}]` → `{"runId"}`: a saved workflow, run like a plan."""
        return _run_workflow(ls, args)

    @server.command("toolgate.scaffoldTool")
    async def scaffold_tool(ls: Any, args: ScaffoldToolArguments) -> dict[str, Any]:
        """`[{"capability", "name"?, "inputs"?, "outputs"?, "language"?}]` → the files written."""
        return _scaffold_tool(ls, args)


def _marks(ls: ToolgateServer) -> PlanMarks:
    from toolgate.session.plan_records import PlanMarks

    return PlanMarks(ls.service, ls.log)


async def _plan(ls: ToolgateServer, args: PlanArguments) -> dict[str, Any]:
    from toolgate.lsp.mentions import pointed_of
    from toolgate.session import ManifestError, PlanningError
    from toolgate.session.plan_records import gap_scaffold

    pointed = pointed_of(ls.workspace_root(), args.context)  # no workspace: a clear error
    try:
        made = await ls.service.make_plan(args.task, ls.log, config=ls.config(), pointed=pointed)
    except (PlanningError, ManifestError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    payload = {**made.to_dict(), "uri": path_to_uri(made.path)}
    for gap in payload["gaps"]:
        arguments = gap_scaffold(gap)
        if arguments is not None:
            gap["scaffold"] = {"command": "toolgate.scaffoldTool", "arguments": [arguments]}
    # Kept in the conversation, so the card comes back when the session is loaded again.
    session_id = _marks(ls).plan(args.session_id, payload)
    if session_id is not None:
        payload["sessionId"] = session_id
    ls.notify(PLAN_NOTIFICATION, payload)
    return payload


def _run_plan(ls: ToolgateServer, args: RunPlanArguments) -> dict[str, Any]:
    from toolgate.session import ManifestError, PlanningError

    plan_id = args.plan_id
    _no_active_run(ls)
    ls.workspace_root()
    config = ls.config()
    try:
        resolved = ls.service.resolve_plan(plan_id, config=config)
    except (PlanningError, ManifestError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    if resolved.gaps:
        missing = ", ".join(g.missing_capability for g in resolved.gaps)
        raise JsonRpcInvalidParams(f"the plan is partial and does not run: missing {missing}")
    run_id = new_id("workflow")
    session_id = _marks(ls).decision(args.session_id, plan_id, "approved", run_id)
    return _start(ls, resolved, {}, config, run_id, session_id)


def _run_workflow(ls: ToolgateServer, args: RunWorkflowArguments) -> dict[str, Any]:
    from toolgate.session import ManifestError, WorkflowError
    from toolgate.session.workflows import bound_workflow

    _no_active_run(ls)
    root = ls.workspace_root()
    config = ls.config()
    values = {k: v if isinstance(v, str) else json.dumps(v) for k, v in args.inputs.items()}
    try:
        plan, inputs = bound_workflow(root, args.name, values)
        resolved = ls.service.resolve_plan(plan, config=config)
    except (WorkflowError, ManifestError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    if resolved.gaps:
        missing = ", ".join(g.missing_capability for g in resolved.gaps)
        raise JsonRpcInvalidParams(f"the workflow is partial and does not run: missing {missing}")
    return _start(ls, resolved, inputs, config, new_id("workflow"), None)


def _no_active_run(ls: ToolgateServer) -> None:
    if ls.run_task is not None and not ls.run_task.done():
        raise JsonRpcInvalidParams(
            f"a run is already active ({ls.active_run_id}); cancel it or wait for it"
        )


def _start(
    ls: ToolgateServer,
    resolved: Any,
    inputs: dict[str, Any],
    config: Any,
    run_id: str,
    session_id: str | None,
) -> dict[str, Any]:
    ls.active_run_id = run_id
    ls.turn = None  # a workflow has no agent turn: cancel ends its task
    if session_id is not None:
        ls.run_sessions[run_id] = session_id  # its events name the plan's session
    ls.run_task = asyncio.ensure_future(_run(ls, run_id, resolved, inputs, config, session_id))
    return {"runId": run_id}


async def _run(
    ls: ToolgateServer,
    run_id: str,
    resolved: Any,
    inputs: dict[str, Any],
    config: Any,
    session_id: str | None,
) -> None:
    from toolgate.agent.events import RUN_FINISHED, Event, EventBus

    bus = EventBus()

    def keep_end(event: Event) -> None:
        # The run's end joins the plan's session, where its card said it was running.
        if event.type == RUN_FINISHED and session_id is not None:
            status, reason = str(event.fields.get("status")), event.fields.get("reason")
            _marks(ls).run_end(session_id, run_id, status, reason)

    bus.subscribe(keep_end)
    bus.subscribe(ls.forward)
    assert ls.reviewer is not None
    try:
        engine = await ls.service.plan_engine(
            config, ls.reviewer, bus, trusted=ls.editor.trusted, buffers=ls.buffers
        )
        try:
            await engine.run(resolved, resolved.plan.goal, inputs, run_id)
        finally:
            await engine.close()
    except Exception:  # a crash ends this workflow, never the server
        log.exception("workflow %s crashed", run_id)
        ls.log(f"workflow {run_id} failed inside Toolgate; see the server log")


def _scaffold_tool(ls: ToolgateServer, args: ScaffoldToolArguments) -> dict[str, Any]:
    from toolgate.session.workspace_tools import ScaffoldError, scaffold_tool

    capability = args.capability
    name = args.name or capability.replace(".", "_")
    root = ls.workspace_root()
    try:
        made = scaffold_tool(
            root,
            name,
            capability,
            language=args.language,
            inputs=args.inputs,
            outputs=args.outputs,
        )
    except ScaffoldError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    if args.plan_id and args.step_id:
        _marks(ls).scaffolded(args.session_id, args.plan_id, args.step_id, name, made.folder(root))
    return {"name": name, "files": [path_to_uri(f) for f in made.files]}


def plan_actions(server: ToolgateServer, path: Path) -> list[types.CodeAction]:
    """Code actions on a kept plan (`.toolgate/plans/ID.json`): scaffold each gap, or run it."""
    root = server.root
    if root is None or path.suffix != ".json":
        return []
    if path.parent != root.resolve() / ".toolgate" / "plans":
        return []
    try:
        doc = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return []
    gaps = doc.get("gaps") if isinstance(doc, dict) else None
    if not isinstance(gaps, list):
        return []
    from toolgate.session.plan_records import gap_scaffold

    actions: list[types.CodeAction] = []
    for gap in gaps:
        arguments = gap_scaffold(gap) if isinstance(gap, dict) else None
        if arguments is None:
            continue
        actions.append(
            types.CodeAction(
                title=f"Scaffold missing tool {arguments['name']} ({arguments['capability']})",
                kind=types.CodeActionKind.QuickFix,
                command=types.Command(
                    title="Scaffold missing tool",
                    command="toolgate.scaffoldTool",
                    arguments=[arguments],
                ),
            )
        )
    if not gaps:
        actions.append(
            types.CodeAction(
                title="Run this plan",
                kind=types.CodeActionKind.Refactor,
                command=types.Command(
                    title="Run this plan",
                    command="toolgate.runPlan",
                    arguments=[{"planId": path.stem}],
                ),
            )
        )
    return actions
