"""`toolgate review [--staged]`: the model reviews the working tree's changes.

Each comment is printed as `path:line severity message` (the form editors and `grep` read),
its suggested replacement on the next line; the exit status is 0 when the change is approved,
1 when it is not (or the model gave no review), 2 on a usage or configuration error (no
endpoint configured, not a git repository).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from toolgate.cli import flags
from toolgate.cli.workspace import workspace_root

EXIT_OK, EXIT_NOT_APPROVED, EXIT_USAGE = 0, 1, 2


def register(sub: Any) -> None:
    """Register the `review` subcommand."""
    review = sub.add_parser(
        "review",
        help="review the working tree's changes (or the staged ones) with the model",
    )
    flags.workspace(review)
    review.add_argument(
        "--staged", action="store_true", help="review what is staged, not the working tree"
    )
    flags.endpoint(review)
    review.add_argument(
        "--focus",
        action="append",
        metavar="TOPIC",
        help="what to look at first (repeatable; default: the config's review.focus)",
    )
    review.add_argument("--json", action="store_true", help="print the review as JSON")
    review.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Review the changes, print the comments, exit by the verdict."""
    from toolgate.config import load_config
    from toolgate.session import ConfigError, ReviewError, ReviewSetupError, SessionService

    root = workspace_root(args.workspace)
    if root is None:
        return EXIT_USAGE
    try:
        config = load_config(root, overrides=flags.overrides(args))
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    def notice(message: str) -> None:
        print(f"toolgate review: {message}", file=sys.stderr)

    async def review() -> Any:
        service = SessionService(root, lambda: config, notice=notice)
        try:
            return await service.review(config, notice, staged=args.staged, focus=args.focus)
        finally:
            await service.close()  # the embedded model, when it was started for this review

    try:
        _, result = asyncio.run(review())
    except ReviewSetupError as exc:
        print(f"toolgate review: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ReviewError as exc:
        print(f"toolgate review: {exc}", file=sys.stderr)
        return EXIT_NOT_APPROVED
    except KeyboardInterrupt:
        print("toolgate review: interrupted", file=sys.stderr)
        return 130
    if result is None:
        what = "staged" if args.staged else "in the working tree"
        print(f"toolgate review: no changes {what}: nothing to review", file=sys.stderr)
        return EXIT_OK
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        for line in result.comment_lines():
            print(line)
    print(f"toolgate review: {result.summary()}", file=sys.stderr)
    return EXIT_OK if result.approved else EXIT_NOT_APPROVED


async def review_loop(
    service: Any,
    config: Any,
    task: str,
    reviewer: Any,
    bus: Any,
    session_id: str | None,
) -> int:
    """`toolgate run --review-loop TASK`: the loop to its account; 0 only when it completed."""
    from toolgate.session import ReviewLoop

    outcome = await ReviewLoop(service, config, reviewer, bus).run(task, session_id)
    print(f"toolgate: session {outcome.session_id}", file=sys.stderr)
    return EXIT_OK if outcome.status == "completed" else EXIT_NOT_APPROVED
