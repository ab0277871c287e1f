"""`toolgate lsp`: serve the language server, on stdio or TCP."""

from __future__ import annotations

import argparse
from typing import Any

from toolgate.cli.serving import stdio_notice


def register(sub: Any) -> None:
    """Add `lsp` to the subcommands."""
    lsp = sub.add_parser("lsp", help="serve the language server (stdio by default)")
    lsp.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    lsp.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Serve until the client leaves."""
    stdio_notice("lsp")
    from toolgate.lsp.server import serve

    return serve(tcp=args.tcp)
