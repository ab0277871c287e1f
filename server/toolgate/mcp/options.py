"""The command line of `toolgate mcp`'s network side: `--http`, `--host`, `--port`, fixtures.

Kept apart from `cli/command.py` so the terminal front end registers them in one line, and apart
from the server so reading them imports no SDK.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass


@dataclass(frozen=True)
class HttpOptions:
    """Where `toolgate mcp --http` listens (port 0: one the system picks, printed at start)."""

    host: str = "127.0.0.1"
    port: int = 0


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return port


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`--http`, `--host`, `--port` and `--conformance-fixtures` on `toolgate mcp`."""
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve over Streamable HTTP instead of stdio (docs/MCP.md: serving over HTTP safely)",
    )
    parser.add_argument(
        "--host",
        default=HttpOptions.host,
        help="with --http: the address to listen on (default: 127.0.0.1, this machine only; "
        "any other needs a bearer token, printed at start or taken from TOOLGATE_MCP_TOKEN)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=HttpOptions.port,
        help="with --http: the port (default: 0, a free one, printed at start)",
    )
    parser.add_argument(
        "--conformance-fixtures",
        action="store_true",
        help="also offer the MCP conformance suite's fixture tools (for conformance testing only)",
    )


def http_options(args: argparse.Namespace) -> HttpOptions | None:
    """The HTTP options the command line asked for, or None for stdio."""
    if not getattr(args, "http", False):
        return None
    return HttpOptions(host=args.host, port=args.port)
