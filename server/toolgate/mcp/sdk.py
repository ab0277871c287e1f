"""The official `mcp` SDK is optional: one place that says how to get it."""

from __future__ import annotations

import importlib.util

MISSING = (
    'the MCP support needs the mcp package (2.3 or later): pip install "toolgate[mcp]" '
    '(or pip install "mcp>=2.3,<3")'
)


def available() -> bool:
    """Whether the SDK can be imported (checked without importing it: that takes seconds)."""
    return (
        importlib.util.find_spec("mcp") is not None
        and importlib.util.find_spec("mcp_types") is not None
    )
