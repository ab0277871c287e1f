"""Saved workflows as a front end lists, saves, binds and runs them.

A workflow is a plan kept under a name in `.agent/workflows/NAME.yaml`, with declared inputs; a
plan kept by `toolgate plan` in `.toolgate/plans/ID.json` runs the same way. What a front end
draws of them (the workflow, its resolved plan, the outcome of its run, the step events) is
named here too, so that it takes them from the session like the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from toolgate.config import Config
from toolgate.planning.gaps import ResolvedPlan as ResolvedPlan
from toolgate.planning.plan import Plan
from toolgate.planning.workflow import STEP_FINISHED as STEP_FINISHED
from toolgate.planning.workflow import STEP_STARTED as STEP_STARTED
from toolgate.planning.workflow import (
    DryStep,
    WorkflowError,
    dry_run,
    find_workflow,
    load_workflow,
    save_workflow,
    workflow_paths,
)
from toolgate.planning.workflow import Workflow as Workflow
from toolgate.planning.workflow import WorkflowOutcome as WorkflowOutcome
from toolgate.session.plans import Engine


class Resolving(Protocol):
    """The part of the session service that resolves a plan against the workspace's tools."""

    def resolve_plan(
        self, plan: Plan | str, *, config: Config, write_cache: bool = True
    ) -> ResolvedPlan:
        """A plan, or the kept plan of that id, resolved."""
        ...


@dataclass(frozen=True)
class Listed:
    """One saved workflow's file: the workflow, or what is wrong with it."""

    path: Path
    workflow: Workflow | None
    error: str | None = None


def saved_workflows(root: Path) -> list[Listed]:
    """Every saved workflow of the workspace, a broken file with its error."""
    listed: list[Listed] = []
    for path in workflow_paths(root):
        try:
            listed.append(Listed(path, load_workflow(path)))
        except WorkflowError as exc:
            listed.append(Listed(path, None, str(exc)))
    return listed


def save_plan(root: Path, name: str, plan: Plan, description: str = "") -> Path:
    """Keep a plan as the workflow NAME; the file written."""
    return save_workflow(root, Workflow(name, plan, description=description))


def bound_workflow(root: Path, name: str, values: dict[str, str]) -> tuple[Plan, dict[str, Any]]:
    """A saved workflow's plan and one run's inputs, read from `key=value` strings.

    Raises WorkflowError for a workflow that is not there or inputs it does not take.
    """
    workflow = find_workflow(root, name)
    return workflow.plan, workflow.bind(values)


def workflow_to_run(
    service: Resolving,
    root: Path,
    name: str,
    values: dict[str, str],
    *,
    config: Config,
    write_cache: bool = True,
) -> tuple[Workflow, ResolvedPlan, dict[str, Any]]:
    """The workflow NAME (or the kept plan of that id), resolved, with one run's inputs.

    A plan kept by `toolgate plan` (and perhaps edited since) runs as it now reads. Raises
    WorkflowError, PlanningError or ManifestError.
    """
    if (root / ".toolgate" / "plans" / f"{name}.json").is_file():
        resolved = service.resolve_plan(name, config=config, write_cache=write_cache)
        workflow = Workflow(name, resolved.plan)
        return workflow, resolved, workflow.bind(values)
    workflow = find_workflow(root, name)
    inputs = workflow.bind(values)
    resolved = service.resolve_plan(workflow.plan, config=config, write_cache=write_cache)
    return workflow, resolved, inputs


def dry_steps(
    engine: Engine, resolved: ResolvedPlan, task: str, inputs: dict[str, Any]
) -> list[DryStep]:
    """Each step's tool, arguments and command line as the engine would run it; nothing runs."""
    return dry_run(resolved, engine.registry, engine.gate, task, inputs)
