"""`toolgate run TASK`: one turn of the agent, headless, each step printed."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from toolgate.cli import flags, review
from toolgate.cli.workspace import workspace_root

EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

RUN_EPILOG = """\
example:
  toolgate run "Fix the failing test in tests/test_parse.py" --model qwen2.5-coder \\
      --base-url http://127.0.0.1:8080/v1

exit status:
  0    completed: the model ended the run, its last change landed and its last
       command was not refused
  1    incomplete: the last gated call was refused, or the last change failed, and
       nothing landed after it, or the last test run did not run its tests, or
       the model's last tool call was written as text and never ran, or the
       model refused the task; or failed,
       limit_reached, blocked_by_policy,
       cancelled (the last line says which)
  2    usage or configuration error (nothing was sent to the model)
  130  interrupted with Ctrl-C

environment:
  TOOLGATE_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY, NO_COLOR
"""


def register(sub: Any) -> None:
    """Add `run` to the subcommands."""
    run = sub.add_parser(
        "run",
        help="run the agent on a task in a workspace (headless)",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("task", help="what the agent should do")
    flags.workspace(run)
    flags.endpoint(run)
    flags.profile(run)
    flags.approve(run)
    flags.approval_mode(run)
    flags.agent_limits(run)
    run.add_argument("--json", action="store_true", help="print events as JSON lines on stdout")
    run.add_argument(
        "--review-loop",
        action="store_true",
        help="implement, have the model review the change, implement again with its comments "
        "(up to review.max_rounds reviews), then run the tests",
    )
    run.add_argument("--llm-log", metavar="FILE", help="write every model request and response")
    flags.session_choice(run)
    run.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Run the task as one turn; the exit status says how it ended (see RUN_EPILOG)."""
    from toolgate.config import ConfigError, load_config
    from toolgate.session import SessionError, SetupError

    root = workspace_root(args.workspace)
    if root is None:
        return EXIT_USAGE
    if not args.task.strip():
        print("toolgate: the task is empty: say what the agent should do", file=sys.stderr)
        return EXIT_USAGE
    try:
        config = load_config(root, overrides=flags.overrides(args))
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    approve = args.approve or ("ask" if sys.stdin.isatty() else "deny")
    from toolgate.model.llm_log import enable_for

    enable_for(root, getattr(args, "llm_log", None))
    session_id = getattr(args, "session", None)
    latest = getattr(args, "continue_session", False)
    try:
        return asyncio.run(
            run_turn(
                root,
                config,
                args.task,
                approve,
                args.json,
                session_id,
                latest,
                review_loop=getattr(args, "review_loop", False),
                mode=getattr(args, "mode", "ask"),
            )
        )
    except SessionError as exc:
        print(f"toolgate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SetupError as exc:
        print(f"toolgate: {exc}", file=sys.stderr)
        return EXIT_RUN_FAILED if exc.blocked else EXIT_USAGE
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("toolgate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


async def run_turn(
    root: Path,
    config: Any,
    task: str,
    approve: str,
    json_lines: bool,
    session_id: str | None = None,
    latest: bool = False,
    endpoint: Any = None,
    review_loop: bool = False,
    mode: str = "ask",
) -> int:
    """One turn in ROOT on the session service, printed on the terminal; the exit status."""
    from toolgate.agent.events import EventBus
    from toolgate.cli.terminal import Printer, TerminalReviewer
    from toolgate.review.reviewer import AutoReviewer, DenyReviewer
    from toolgate.session import SessionError, SessionService
    from toolgate.session.mentions import IN_TERMINAL, Pointed
    from toolgate.workspace import Workspace

    bus = EventBus()
    printer = Printer(json_lines=json_lines, show_diffs=approve != "ask")
    bus.subscribe(printer)
    workspace = Workspace(root, max_file_bytes=config.limits.max_file_bytes)
    reviewer = {"ask": TerminalReviewer, "auto": AutoReviewer, "deny": DenyReviewer}[approve](
        workspace
    )
    service = SessionService(
        root, lambda: config, notice=lambda message: print(message, file=sys.stderr)
    )
    service.set_mode(mode)
    if latest:
        session_id = service.latest()
        if session_id is None:
            raise SessionError(f"no session to continue in {root}")
    if review_loop:
        try:
            return await review.review_loop(service, config, task, reviewer, bus, session_id)
        finally:
            await service.close()
    claim = service.claim(session_id, new=session_id is None)
    try:
        outcome = await service.turn(
            claim,
            task,
            config=config,
            reviewer=reviewer,
            bus=bus,
            endpoint=endpoint,
            pointed=Pointed(unavailable=IN_TERMINAL),
        )
    finally:
        await service.close()
    print(f"toolgate: session {claim.session_id}", file=sys.stderr)
    # On a terminal the answer was streamed to the screen already; a pipe gets it once, clean.
    if outcome.answer and not json_lines and not sys.stdout.isatty():
        print(outcome.answer)
    return EXIT_OK if outcome.status == "completed" else EXIT_RUN_FAILED
