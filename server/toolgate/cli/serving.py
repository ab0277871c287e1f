"""What the servers on stdio (`toolgate lsp`, `mcp`, `acp`) say on a terminal."""

from __future__ import annotations

import sys


def stdio_notice(command: str) -> None:
    """Say, when started by hand on a terminal, that the server waits for its client."""
    if sys.stdin.isatty():
        print(
            f"toolgate {command}: waiting for a client on stdio "
            "(an editor or agent starts this itself; Ctrl-C to stop)",
            file=sys.stderr,
        )
