"""Fixtures of the security tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest


@pytest.fixture
def listener() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections: what a test run must not reach."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
