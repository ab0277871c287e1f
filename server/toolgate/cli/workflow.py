"""`toolgate workflow run NAME|PLAN_ID key=value…` and `toolgate workflow list`."""

from __future__ import annotations

import argparse
from typing import Any

from toolgate.cli import flags


def register(sub: Any) -> None:
    """Add `workflow` and its `run` and `list` to the subcommands."""
    workflow = sub.add_parser("workflow", help="run or list saved workflows")
    workflow_sub = workflow.add_subparsers(dest="workflow_command", required=True)
    run = workflow_sub.add_parser("run", help="run .agent/workflows/NAME.yaml")
    run.add_argument("name", help="the workflow (toolgate workflow list)")
    run.add_argument("values", nargs="*", metavar="key=value", help="the workflow's inputs")
    flags.workspace(run)
    run.add_argument("--dry-run", action="store_true", help="show each step; run nothing")
    flags.approve(run)
    run.add_argument("--json", action="store_true", help="print events as JSON lines")
    listed = workflow_sub.add_parser("list", help="the saved workflows")
    flags.workspace(listed)
    workflow.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Run a saved workflow (or a kept plan), or list them."""
    from toolgate.cli.plans import workflow_main

    return workflow_main(args)
