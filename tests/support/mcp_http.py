"""`toolgate mcp --http` as a real process, for the tests that speak to it over the network."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

_URL = re.compile(r"at (http://\S+/mcp)")
START_SECONDS = 90.0  # the SDK takes seconds to import on a busy machine


@dataclass
class HttpServer:
    """A running `toolgate mcp --http`: its URL and what it printed on stderr so far."""

    url: str
    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    @property
    def stderr(self) -> str:
        """Everything the server printed on stderr so far."""
        return "".join(self.lines)


@contextmanager
def http_server(repo: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[HttpServer]:
    """Start `toolgate mcp --http --port 0 --workspace REPO ARGS…`; stopped with SIGINT after.

    Yields once the server printed its URL; fails with its stderr when it does not.
    """
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolgate",
            "mcp",
            "--http",
            "--port",
            "0",
            "--workspace",
            str(repo),
            *args,
        ],
        cwd=repo,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if _URL.search(line):
                found.set()
        found.set()  # it ended

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        found.wait(START_SECONDS)
        match = next((m for m in map(_URL.search, lines) if m), None)
        assert match, f"toolgate mcp --http did not start: {''.join(lines)[-3000:]}"
        yield HttpServer(match.group(1), process, lines)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        reader.join(5)


def wait_for(predicate: object, seconds: float = 30.0) -> None:
    """Poll `predicate()` until it is true; fail after `seconds`."""
    assert callable(predicate)
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)
