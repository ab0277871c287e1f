"""`toolgate acp`: serve the Agent Client Protocol on stdio (Zed, JetBrains, …)."""

from __future__ import annotations

import argparse
from typing import Any

from toolgate.cli import flags
from toolgate.cli.serving import stdio_notice


def register(sub: Any) -> None:
    """Add `acp` to the subcommands."""
    acp = sub.add_parser("acp", help="serve the Agent Client Protocol on stdio (Zed, JetBrains, …)")
    flags.endpoint(acp)
    flags.profile(acp)
    acp.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Serve until the client leaves."""
    stdio_notice("acp")
    from toolgate.acp import serve

    return serve(flags.overrides(args))
