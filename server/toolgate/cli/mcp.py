"""`toolgate mcp`: serve the gated tools (and, asked, the agent) to other agents over MCP."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from toolgate.cli import flags
from toolgate.cli.serving import stdio_notice
from toolgate.mcp import options as mcp_options


def register(sub: Any) -> None:
    """Add `mcp` to the subcommands."""
    mcp = sub.add_parser("mcp", help="serve the gated tools to other agents over MCP (stdio, HTTP)")
    flags.workspace(mcp)
    flags.approve(
        mcp,
        ("deny", "auto"),
        default="deny",
        help="gated calls: refuse them (default), or approve file and git changes "
        "(commands off the allow-list are refused either way); with --agent-tools, what a "
        "client that cannot ask its person (no elicitation) gets",
    )
    mcp.add_argument(
        "--agent-tools",
        action="store_true",
        help="also serve the agent itself: implement_code, review_code, run_tests, "
        "refactor_code, generate_documentation",
    )
    flags.endpoint(mcp)  # for the agent tools
    mcp_options.add_arguments(mcp)  # --http, --host, --port, --conformance-fixtures
    mcp.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Serve until the client leaves (stdio) or Ctrl-C (HTTP)."""
    if not args.http:
        stdio_notice("mcp")
    from toolgate.mcp.server import serve

    return serve(
        Path(args.workspace).resolve(),
        args.approve,
        agent_tools=args.agent_tools,
        overrides=flags.overrides(args),
        http=mcp_options.http_options(args),
        conformance_fixtures=args.conformance_fixtures,
    )
