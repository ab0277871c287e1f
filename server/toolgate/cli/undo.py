"""`toolgate undo [RUN_ID] [--dry-run] [--force]`: put back what a run changed."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from toolgate.cli import flags
from toolgate.cli.workspace import workspace_root

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2


def register(sub: Any) -> None:
    """Register the `undo` subcommand."""
    undo = sub.add_parser("undo", help="restore the files a run changed (default: the latest run)")
    undo.add_argument("run_id", nargs="?", help="the run to undo (see .toolgate/runs/)")
    flags.workspace(undo)
    undo.add_argument(
        "--dry-run", action="store_true", help="list what it would do, change nothing"
    )
    undo.add_argument(
        "--force", action="store_true", help="also restore files changed since the run"
    )
    undo.add_argument("--json", action="store_true", help="print the outcome as JSON")
    undo.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Undo a run, or say what undoing it would do."""
    from toolgate.config import Config
    from toolgate.session import CheckpointError, SessionService

    root = workspace_root(args.workspace)
    if root is None:
        return EXIT_USAGE
    # Undo reads no configuration: a broken config file must not stand between a person and
    # the files a run changed.
    service = SessionService(root, Config, notice=lambda m: print(m, file=sys.stderr))
    try:
        done = asyncio.run(service.undo(args.run_id, force=args.force, dry_run=args.dry_run))
    except (CheckpointError, OSError, ValueError) as exc:
        print(f"toolgate undo: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    plan, payload = done.plan, done.to_dict()
    if args.json:
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    else:
        for item in plan.files:
            print(f"{item.action:14} {item.path}  ({item.reason})")
        print(
            f"toolgate undo: run {plan.run_id}: {plan.outcome(dry_run=args.dry_run)}",
            file=sys.stderr,
        )
        left = plan.left_alone()
        if left:
            print(f"toolgate undo: {left}; --force restores them too", file=sys.stderr)
        if "undoRunId" in payload:
            print(
                f"toolgate undo: recorded as {payload['undoRunId']}; "
                f"`toolgate undo {payload['undoRunId']}` brings the changes back",
                file=sys.stderr,
            )
        if "sessionId" in payload:
            print(f"toolgate undo: kept in session {payload['sessionId']}", file=sys.stderr)
        hint = plan.revert_hint()
        if hint:
            print(f"toolgate undo: {hint}", file=sys.stderr)
    return EXIT_REFUSED if plan.conflicts and not args.dry_run else EXIT_OK
