"""An MCP server that never finishes starting: it notes its pid, then reads and never answers."""

from __future__ import annotations

import os
import sys

with open(sys.argv[1], "a", encoding="utf-8") as handle:
    handle.write(f"{os.getpid()}\n")
for _line in sys.stdin:
    pass  # the handshake never gets an answer
