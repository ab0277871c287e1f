"""The remote MCP test server (`tests/mcp/remote_server.py`) as a process, and a $BROWSER.

The server writes what happened (calls with their bearer token, sign-ins, refreshes) as JSON
lines to a log the tests read; the browser is a script that follows a URL as a browser would.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.net import closed_port

REMOTE = Path(__file__).resolve().parents[1] / "mcp" / "remote_server.py"


def events(log: Path, kind: str | None = None) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [r for r in rows if kind is None or r["event"] == kind]


@contextmanager
def remote_server(
    log: Path, *args: str, port: int | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Start the remote test server; yields its URL and process, stopped after."""
    port = port or closed_port()
    process = subprocess.Popen(
        [sys.executable, str(REMOTE), str(port), str(log), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 90
        while not events(log, "listening") or not _answers(port):
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "the remote test server did not start"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _answers(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def browser(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """$BROWSER for the runs: a script that follows the URL, as a browser would."""
    visits = tmp_path / "visits.txt"
    script = tmp_path / "browser"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, urllib.request\n"
        f"open({str(visits)!r}, 'a').write(sys.argv[1] + '\\n')\n"
        "urllib.request.urlopen(sys.argv[1], timeout=60).read()\n"
    )
    script.chmod(0o755)
    return {"BROWSER": str(script)}, visits
