"""The `toolgate` command: its parser, built from one module per subcommand, and `main`.

Each subcommand's module has `register(sub)`, which adds its parser and sets the `handler` that
runs it. What those modules import at their top is light (argparse, `cli.flags`): a handler
loads the engine when it runs, so that `toolgate lsp` starts without it. Flags become
configuration in one place, `cli.flags.overrides`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from toolgate import __version__
from toolgate.cli import (
    acp,
    calls,
    chat,
    config,
    demo,
    doctor,
    lsp,
    mcp,
    model,
    plan,
    review,
    run,
    runs,
    sessions,
    tools,
    trust,
    undo,
    workflow,
)
from toolgate.cli.workspace import workspace_root

EXIT_USAGE = 2

# In the order `toolgate --help` lists them.
SUBCOMMANDS = (
    run,
    chat,
    sessions,
    runs,
    lsp,
    tools,
    plan,
    workflow,
    undo,
    review,
    calls,
    demo,
    mcp,
    acp,
    doctor,
    model,
    config,
    trust,
)


def _verbosity() -> argparse.ArgumentParser:
    # A parent parser, so that -v is read after the subcommand as well as before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="Toolgate's debug log on stderr",
    )
    return common


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolgate",
        description="A coding agent whose every tool call passes a gate: reads run at once, "
        "changes wait for your yes, nothing runs through a shell or leaves the workspace.",
        epilog='start with: toolgate run "Fix the failing test" (or toolgate chat, toolgate '
        "demo); toolgate COMMAND --help for each command",
    )
    parser.add_argument("--version", action="version", version=f"toolgate {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="Toolgate's debug log on stderr"
    )
    sub = parser.add_subparsers(dest="command")
    common = _verbosity()
    _add = sub.add_parser

    def add_parser(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return _add(name, parents=[common, *kwargs.pop("parents", [])], **kwargs)

    sub.add_parser = add_parser  # type: ignore[method-assign]  # argparse has no hook for parents shared by every subcommand
    for command in SUBCOMMANDS:
        command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else EXIT_USAGE
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    # Checked once for every command, before any of them reads, writes or serves there.
    if getattr(args, "workspace", None) is not None and workspace_root(args.workspace) is None:
        return EXIT_USAGE
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.verbose:
        # Toolgate's and the protocol's debug lines; the HTTP libraries' would bury them.
        for name in ("httpcore", "httpcore2", "httpx", "openai", "asyncio", "anyio", "urllib3"):
            logging.getLogger(name).setLevel(logging.WARNING)
    code: int = args.handler(args)
    return code
