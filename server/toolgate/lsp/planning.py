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

PLAN_NOTIFICATION = "toolgate/plan"
log = logging.getLogger(__name__)


def register(server: ToolgateServer) -> None:
    """Add the planning commands to the language server."""

    # The handlers' `ls` is typed Any: pygls and the argument reader resolve a handler's type
    # hints at run time, and the server's class is only known here for type checking; `server`
    # is the same object, typed.
    @server.command("toolgate.plan")
    async def plan(ls: Any, args: PlanArguments) -> dict[str, Any]:
        """`[{"task"}]` → the resolved plan with its gaps; also sent as `toolgate/plan`."""
        from toolgate.planning.gaps import scaffoldable
        from toolgate.session import ManifestError, PlanningError

        server.workspace_root()  # a clear error without a workspace folder
        try:
            made = await server.service.make_plan(args.task, server.log, config=server.config())
        except (PlanningError, ManifestError) as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        payload = {**made.to_dict(), "uri": path_to_uri(made.path)}
        for gap in payload["gaps"]:
            if not scaffoldable(gap["reason"]):
                continue
            gap["scaffold"] = {
                "command": "toolgate.scaffoldTool",
                "arguments": [
                    {
                        "name": gap["proposed_tool_name"],
                        "capability": gap["missing_capability"],
                        "inputs": list(gap["proposed_input_schema"].get("properties", {})),
                        "outputs": list(gap["proposed_output_schema"].get("properties", {})),
                    }
                ],
            }
        from toolgate.conversation.marks import plan_record

        # Kept in the conversation, so the card comes back when the session is loaded again.
        session_id = _mark(args.session_id, plan_record(payload), create=True)
        if session_id is not None:
            payload["sessionId"] = session_id
        server.notify(PLAN_NOTIFICATION, payload)
        return payload

    @server.command("toolgate.runPlan")
    async def run_plan(ls: Any, args: RunPlanArguments) -> dict[str, Any]:
        """`[{"planId"}]` → `{"runId"}`: the kept plan runs through the gate, reviewed here."""
        from toolgate.session import ManifestError, PlanningError

        plan_id = args.plan_id
        _no_active_run()
        server.workspace_root()
        config = server.config()
        try:
            resolved = server.service.resolve_plan(plan_id, config=config)
        except (PlanningError, ManifestError) as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        if resolved.gaps:
            missing = ", ".join(g.missing_capability for g in resolved.gaps)
            raise JsonRpcInvalidParams(f"the plan is partial and does not run: missing {missing}")
        from toolgate.conversation.marks import decision_record

        run_id = new_id("workflow")
        session_id = _mark(args.session_id, decision_record(plan_id, "approved", run_id))
        return _start(resolved, {}, config, run_id, session_id)

    @server.command("toolgate.dropPlan")
    async def drop_plan(ls: Any, args: DropPlanArguments) -> dict[str, Any]:
        """`[{"planId", "sessionId"?}]` → `{"dropped": true}`: the plan will not run."""
        from toolgate.conversation.marks import decision_record

        server.workspace_root()  # a clear error without a workspace folder
        session_id = _mark(args.session_id, decision_record(args.plan_id, "dropped"))
        return {"planId": args.plan_id, "dropped": True, "sessionId": session_id}

    def _mark(
        session_id: str | None, record: dict[str, Any], *, create: bool = False
    ) -> str | None:
        """Keep a record in the conversation; a session that cannot take it is said, not raised."""
        from toolgate.session import SessionError

        try:
            return server.service.mark(session_id, record, create=create)
        except (SessionError, OSError) as exc:
            server.log(f"could not keep the plan in the conversation: {exc}")
            return None

    @server.command("toolgate.runWorkflow")
    async def run_workflow(ls: Any, args: RunWorkflowArguments) -> dict[str, Any]:
        """`[{"name", "inputs"?: {…}}]` → `{"runId"}`: a saved workflow, run like a plan."""
        from toolgate.planning.workflow import find_workflow
        from toolgate.session import ManifestError, WorkflowError

        name, values = args.name, args.inputs
        _no_active_run()
        root = server.workspace_root()
        config = server.config()
        try:
            workflow = find_workflow(root, name)
            inputs = workflow.bind(
                {k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}
            )
            resolved = server.service.resolve_plan(workflow.plan, config=config)
        except (WorkflowError, ManifestError) as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        if resolved.gaps:
            missing = ", ".join(g.missing_capability for g in resolved.gaps)
            raise JsonRpcInvalidParams(
                f"the workflow is partial and does not run: missing {missing}"
            )
        return _start(resolved, inputs, config, new_id("workflow"), None)

    def _no_active_run() -> None:
        if server.run_task is not None and not server.run_task.done():
            raise JsonRpcInvalidParams(
                f"a run is already active ({server.active_run_id}); cancel it or wait for it"
            )

    def _start(
        resolved: Any,
        inputs: dict[str, Any],
        config: Any,
        run_id: str,
        session_id: str | None,
    ) -> dict[str, Any]:
        server.active_run_id = run_id
        server.turn = None  # a workflow has no agent turn: cancel ends its task
        if session_id is not None:
            server.run_sessions[run_id] = session_id  # its events name the plan's session
        server.run_task = asyncio.ensure_future(_run(run_id, resolved, inputs, config, session_id))
        return {"runId": run_id}

    async def _run(
        run_id: str,
        resolved: Any,
        inputs: dict[str, Any],
        config: Any,
        session_id: str | None,
    ) -> None:
        from toolgate.agent.events import RUN_FINISHED, Event, EventBus
        from toolgate.conversation.marks import run_end_record

        bus = EventBus()

        def keep_end(event: Event) -> None:
            # The run's end joins the plan's session, where its card said it was running.
            if event.type == RUN_FINISHED and session_id is not None:
                end = run_end_record(
                    run_id, str(event.fields.get("status")), event.fields.get("reason")
                )
                _mark(session_id, end)

        bus.subscribe(keep_end)
        bus.subscribe(server.forward)
        assert server.reviewer is not None
        try:
            engine = await server.service.plan_engine(
                config,
                server.reviewer,
                bus,
                trusted=server.editor.trusted,
                buffers=server.buffers,
            )
            try:
                await engine.run(resolved, resolved.plan.goal, inputs, run_id)
            finally:
                await engine.close()
        except Exception:  # a crash ends this workflow, never the server
            log.exception("workflow %s crashed", run_id)
            server.log(f"workflow {run_id} failed inside Toolgate; see the server log")

    @server.command("toolgate.scaffoldTool")
    async def scaffold_tool(ls: Any, args: ScaffoldToolArguments) -> dict[str, Any]:
        """`[{"capability", "name"?, "inputs"?, "outputs"?, "language"?}]` → the files written."""
        from toolgate.tools.scaffold import ScaffoldError, scaffold
        from toolgate.tools.yaml_manifest import read_manifest
        from toolgate.trust import TrustStore

        capability = args.capability
        name = args.name or capability.replace(".", "_")
        root = server.workspace_root()
        try:
            files = scaffold(
                root,
                name,
                capability,
                language=args.language,
                inputs=list(args.inputs),
                outputs=list(args.outputs),
            )
        except ScaffoldError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        # The person asked for it just now: this exact version is trusted; an edit asks again.
        TrustStore().confirm(root, [read_manifest(files[0]).fingerprint])
        if args.plan_id and args.step_id:
            from toolgate.conversation.marks import scaffold_record

            try:
                folder = files[0].parent.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:  # the person's own tools folder, outside the workspace
                folder = str(files[0].parent)
            _mark(args.session_id, scaffold_record(args.plan_id, args.step_id, name, folder))
        return {"name": name, "files": [path_to_uri(f) for f in files]}


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
    from toolgate.planning.gaps import scaffoldable

    actions: list[types.CodeAction] = []
    for gap in gaps:
        if not isinstance(gap, dict) or not isinstance(gap.get("missing_capability"), str):
            continue
        if not scaffoldable(str(gap.get("reason"))):
            continue
        name = str(gap.get("proposed_tool_name") or gap["missing_capability"].replace(".", "_"))
        arguments = {
            "name": name,
            "capability": gap["missing_capability"],
            "inputs": list((gap.get("proposed_input_schema") or {}).get("properties", {})),
            "outputs": list((gap.get("proposed_output_schema") or {}).get("properties", {})),
        }
        actions.append(
            types.CodeAction(
                title=f"Scaffold missing tool {name} ({gap['missing_capability']})",
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
