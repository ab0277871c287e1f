"""What `toolgate plan` and `toolgate workflow` do: a thin adapter over planning.

The plan and the account as the terminal shows them, the engine a plan runs on, and running
a plan or a saved workflow. Loaded when one of the two commands runs, not to read the command
line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from toolgate.agent.events import Event, EventBus
from toolgate.cli import flags
from toolgate.records import new_id
from toolgate.session import Engine, SessionService, WorkflowError
from toolgate.session.workflows import (
    STEP_FINISHED,
    STEP_STARTED,
    ResolvedPlan,
    Workflow,
    WorkflowOutcome,
    dry_steps,
    save_plan,
    saved_workflows,
    workflow_to_run,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _err(message: str) -> None:
    print(f"toolgate: {message}", file=sys.stderr)


def print_plan(resolved: ResolvedPlan, out: Any = None) -> None:
    """The plan as a table, then its gaps with the command that scaffolds each missing tool."""
    out = out or sys.stdout
    print(f"plan: {resolved.plan.goal}", file=out)
    print(f"status: {resolved.status}", file=out)
    rows = [("step", "capability", "tool", "confidence", "on_failure", "inputs")]
    for item in resolved.steps:
        step = item.step
        inputs = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in step.inputs.items()
        )
        rows.append(
            (
                step.step_id,
                step.capability,
                item.tool or "— (gap)",
                f"{step.coverage_confidence:.2f}",
                step.on_failure,
                inputs[:60],
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=False)]
        print("  " + "  ".join([*cells, row[-1]]), file=out)
    if resolved.gaps:
        print("gaps (the plan does not run until each is filled):", file=out)
        for gap in resolved.gaps:
            print(
                f"  {gap.step_id} {gap.missing_capability}: {gap.reason} — {gap.reason_message} "
                f"(priority {gap.priority})",
                file=out,
            )
            command = gap.scaffold_command()
            if command is not None:
                print(f"    scaffold: {command}", file=out)
            else:
                print(
                    "    fix: the step must name a capability as domain.action: ask for the "
                    "plan again, or edit the kept plan and run it with toolgate workflow run",
                    file=out,
                )


def print_account(outcome: WorkflowOutcome, out: Any = None) -> None:
    """The final account: operations done and, when it did not finish, missing."""
    out = out or sys.stdout
    account = outcome.account()
    print(f"workflow {outcome.run_id} {outcome.status}", file=out)
    print(f"  done: {', '.join(account['done']) or 'none'}", file=out)
    if account["skipped"]:
        print(f"  skipped: {', '.join(account['skipped'])}", file=out)
    if account["missing"]:
        print(f"  missing: {', '.join(account['missing'])}", file=out)
    if outcome.reason:
        print(f"  reason: {outcome.reason}", file=out)
    if outcome.log_path:
        print(f"  run log: {outcome.log_path}", file=out)


class StepPrinter:
    """Workflow events on stderr (the agent's printer shows the calls themselves)."""

    def __call__(self, event: Event) -> None:
        """Print one event."""
        f = event.fields
        if event.type == STEP_STARTED:
            print(f"step {f['step_id']} {f['capability']} → {f['tool_name']}", file=sys.stderr)
        elif event.type == STEP_FINISHED and not f["success"]:
            print(
                f"  step {f['step_id']} failed after {f['attempts']} attempt(s): {f['error']}",
                file=sys.stderr,
            )


async def build_engine(root: Path, config: Any, approve: str, json_lines: bool) -> Engine:
    """The terminal's engine: its printer, and its reviewer by `--approve`."""
    from toolgate.cli.terminal import Printer, TerminalReviewer
    from toolgate.review.reviewer import AutoReviewer, DenyReviewer
    from toolgate.workspace import Workspace

    bus = EventBus()
    bus.subscribe(Printer(json_lines=json_lines, show_diffs=approve != "ask"))
    if not json_lines:
        bus.subscribe(StepPrinter())
    workspace = Workspace(root, max_file_bytes=config.limits.max_file_bytes)
    reviewer = {"ask": TerminalReviewer, "auto": AutoReviewer, "deny": DenyReviewer}[approve](
        workspace
    )
    return await SessionService(root, lambda: config).plan_engine(config, reviewer, bus)


def _load_config(args: argparse.Namespace) -> tuple[Path, Any] | None:
    from toolgate.config import ConfigError, load_config

    root = Path(args.workspace).resolve()
    if not root.is_dir():
        _err(f"workspace {args.workspace!r} is not a folder")
        return None
    try:
        return root, load_config(root, overrides=flags.overrides(args))
    except ConfigError as exc:
        _err(f"configuration error: {exc}")
        return None


async def _execute(
    engine: Engine, resolved: ResolvedPlan, task: str, inputs: dict[str, Any], llm_calls: int
) -> WorkflowOutcome:
    return await engine.run(resolved, task, inputs, new_id("workflow"), llm_calls=llm_calls)


def _approve(args: argparse.Namespace) -> str:
    return args.approve or ("ask" if sys.stdin.isatty() else "deny")


def workflow_main(args: argparse.Namespace) -> int:
    """`toolgate workflow run NAME|PLAN_ID key=value… [--dry-run]` and `toolgate workflow list`."""
    from toolgate.session import ManifestError

    loaded = _load_config(args)
    if loaded is None:
        return EXIT_USAGE
    root, config = loaded
    if args.workflow_command == "list":
        return _list_workflows(root)
    values: dict[str, str] = {}
    for item in args.values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            _err(f"inputs are key=value, got {item!r}")
            return EXIT_USAGE
        values[key] = value
    from toolgate.session import PlanningError

    service = SessionService(root, lambda: config)
    write = not args.dry_run
    try:
        workflow, resolved, inputs = workflow_to_run(
            service, root, args.name, values, config=config, write_cache=write
        )
    except (WorkflowError, ManifestError, PlanningError) as exc:
        _err(str(exc))
        return EXIT_USAGE
    return asyncio.run(_run_workflow(args, root, config, workflow, resolved, inputs))


def _list_workflows(root: Path) -> int:
    """Each saved workflow: its name, inputs and what it does; a broken file says what is wrong."""
    listed = saved_workflows(root)
    if not listed:
        _err(
            "no workflows in this workspace: `toolgate plan TASK --save NAME` saves one, "
            "or write .agent/workflows/NAME.yaml"
        )
    broken = False
    for item in listed:
        workflow = item.workflow
        if workflow is None:
            broken = True
            print(f"{item.path.stem}  (cannot be used: {item.error})")
            continue
        inputs = " ".join(
            f"{name}=…" if spec.get("required", True) and "default" not in spec else f"[{name}=…]"
            for name, spec in workflow.inputs.items()
        )
        said = workflow.description or workflow.plan.goal
        print("  ".join(part for part in (workflow.name, inputs, said) if part))
    return EXIT_FAILED if broken else EXIT_OK


async def _run_workflow(
    args: argparse.Namespace,
    root: Path,
    config: Any,
    workflow: Workflow,
    resolved: ResolvedPlan,
    inputs: dict[str, Any],
) -> int:
    engine = await build_engine(root, config, _approve(args), args.json)
    try:
        if args.dry_run:
            print_plan(resolved)
            print("dry run: nothing runs")
            for step in dry_steps(engine, resolved, workflow.plan.goal, inputs):
                argv = " ".join(step.argv) if step.argv else "(built-in call)"
                print(f"  {step.step_id} {step.capability} → {step.tool or '— (gap)'}: {argv}")
                print(f"      arguments: {json.dumps(step.arguments, ensure_ascii=False)}")
                if step.note:
                    print(f"      {step.note}")
            return EXIT_OK if not resolved.gaps else EXIT_FAILED
        if resolved.gaps:
            print_plan(resolved)
        outcome = await _execute(engine, resolved, workflow.plan.goal, inputs, 0)
    finally:
        await engine.close()
    if not args.json:
        print_account(outcome)
    return EXIT_OK if outcome.status == "completed" else EXIT_FAILED


def plan_main(args: argparse.Namespace) -> int:
    """`toolgate plan TASK`: a plan from the model (or a saved workflow's trigger), its gaps."""
    from toolgate.session import ManifestError

    loaded = _load_config(args)
    if loaded is None:
        return EXIT_USAGE
    root, config = loaded
    from toolgate.model.llm_log import enable_for

    enable_for(root, args.llm_log)
    try:
        return asyncio.run(_plan(args, root, config))
    except ManifestError as exc:
        _err(str(exc))
        return EXIT_USAGE


async def _plan(args: argparse.Namespace, root: Path, config: Any) -> int:
    from toolgate.session import PlanningError

    service = SessionService(root, lambda: config)
    try:
        made = await service.make_plan(
            args.task, lambda m: print(m, file=sys.stderr), config=config
        )
    except PlanningError as exc:
        _err(str(exc))
        return EXIT_FAILED
    resolved = made.resolved
    if args.json:
        sys.stdout.write(json.dumps(resolved.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        print_plan(resolved)
    if args.save:
        saved = save_plan(root, args.save, resolved.plan, description=args.task)
        print(f"saved as {saved.relative_to(root)}", file=sys.stderr)
    if not args.run:
        return EXIT_OK if not resolved.gaps else EXIT_FAILED
    if not resolved.gaps and sys.stdin.isatty() and args.approve != "auto":
        # The plan is the thing reviewed first; each gated step is still asked for as it runs.
        answer = await asyncio.to_thread(
            input, "Run this plan? [y/N] (to edit it: --save NAME, edit, workflow run) "
        )
        if answer.strip().lower() not in ("y", "yes"):
            print("the plan was not run", file=sys.stderr)
            return EXIT_OK
    engine = await build_engine(root, config, _approve(args), args.json)
    try:
        outcome = await _execute(engine, resolved, args.task, made.inputs, made.llm_calls)
    finally:
        await engine.close()
    if not args.json:
        print_account(outcome)
    return EXIT_OK if outcome.status == "completed" else EXIT_FAILED
