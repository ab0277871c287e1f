"""`toolgate plan TASK`: ask the model for a plan of capability steps, show it, run it."""

from __future__ import annotations

import argparse
from typing import Any

from toolgate.cli import flags


def register(sub: Any) -> None:
    """Add `plan` to the subcommands."""
    plan = sub.add_parser("plan", help="ask the model for a plan of capability steps")
    plan.add_argument("task", help="what the plan should do")
    flags.workspace(plan)
    flags.endpoint(plan)
    plan.add_argument("--save", metavar="NAME", help="save it as .agent/workflows/NAME.yaml")
    plan.add_argument("--run", action="store_true", help="run it when it has no gaps")
    flags.approve(plan)
    plan.add_argument("--json", action="store_true", help="print the resolved plan as JSON")
    plan.add_argument("--llm-log", metavar="FILE", help="write every model request and response")
    plan.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Make the plan; print it, save it or run it as the flags say."""
    from toolgate.cli.plans import plan_main

    return plan_main(args)
