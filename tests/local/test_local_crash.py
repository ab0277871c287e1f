"""The embedded model server killed in the middle of a run: the run says so in one line.

`toolgate run` and the language server start the real server themselves; the test finds it among
their child processes and sends it SIGSEGV, as a runtime built for another CPU would get.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from tests.lsp.conftest import start_editor
from tests.support.processes import alive

pytest.importorskip("llama_cpp", reason="the embedded model needs toolgate[local]")
pytestmark = pytest.mark.local_model

TASK = 'Step 1: call read_file with path "README.md". One tool block per answer.'
CRASH_LINE = re.compile(
    r"^the local model server exited with signal 11 \(SIGSEGV\) — log: (\S+/local-model-\S+\.log); "
    r"reinstall with toolgate model install$"
)


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _local_server_under(pid: int, timeout: float = 300.0) -> int:
    """The embedded model server started by process `pid` (or one of its children)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        todo = [pid]
        while todo:
            current = todo.pop()
            for child in _children(current):
                try:
                    cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                except OSError:
                    continue
                if b"llama_cpp.server" in cmdline and b"--model_alias" in cmdline:
                    return child
                todo.append(child)
        time.sleep(0.2)
    raise AssertionError(f"no local model server under process {pid}")


def test_a_run_whose_local_server_dies_fails_with_one_plain_line(repo: Path) -> None:
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolgate",
            "run",
            TASK,
            "--workspace",
            str(repo),
            "--approve",
            "auto",
            "--json",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert run.stdout is not None
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            ready, _, _ = select.select([run.stdout], [], [], 5.0)
            line = run.stdout.readline() if ready else ""
            if line and json.loads(line)["type"] == "llm_call":
                break
            assert run.poll() is None, run.stderr.read() if run.stderr else ""
        server = _local_server_under(run.pid)
        os.kill(server, signal.SIGSEGV)
        _, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 1, err
    logs = list((repo / ".toolgate" / "runs").glob("*.json"))
    assert len(logs) == 1
    log = json.loads(logs[0].read_text(encoding="utf-8"))
    assert log["status"] == "failed"
    said = CRASH_LINE.match(log["reason"])
    assert said is not None, log["reason"]
    assert Path(said.group(1)).is_file()
    assert f"failed — {log['reason']}" in err
    assert "cannot reach the model" not in err


async def _ask_when_idle(editor: Any, timeout: float = 120.0) -> str:
    """Ask again once the server has finished tidying up after the last run."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return str((await editor.command("toolgate.ask", {"task": TASK}))["runId"])
        except JsonRpcInvalidParams as exc:
            if "already active" not in str(exc) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


async def test_the_language_server_reports_the_crash_and_the_next_ask_restarts_it(
    repo: Path,
) -> None:
    editor = await start_editor(repo, {}, "visual-studio-code")
    client: Any = editor.client
    try:
        first = (await editor.command("toolgate.ask", {"task": TASK}))["runId"]
        await editor.until(
            lambda: any(e.get("type") == "run_started" for e in editor.events), timeout=600
        )
        server_pid = client._server.pid
        crashed = _local_server_under(server_pid)
        os.kill(crashed, signal.SIGSEGV)
        await editor.until(
            lambda: any(
                e.get("type") == "run_finished" and e.get("runId") == first for e in editor.events
            ),
            timeout=600,
        )
        finished = next(e for e in editor.events if e.get("type") == "run_finished")
        assert finished["status"] == "failed"
        assert CRASH_LINE.match(finished["reason"]), finished["reason"]
        await editor.until(
            lambda: any(
                m.type == types.MessageType.Error and CRASH_LINE.match(m.message[10:])
                for m in client.messages
            ),
            timeout=60,
        )
        shown = [m.message for m in client.messages if "local model server" in m.message]
        assert len(shown) == 1 and shown[0].startswith("Toolgate: the local model server")

        # The server is still up, and the next ask starts a new local model server.
        second = await _ask_when_idle(editor)
        assert second != first
        restarted = _local_server_under(server_pid)
        assert restarted != crashed and alive(restarted)
        await editor.until(
            lambda: any(
                e.get("type") == "run_finished" and e.get("runId") == second for e in editor.events
            ),
            timeout=900,
        )
        second_end = [
            e for e in editor.events if e.get("type") == "run_finished" and e["runId"] == second
        ][0]
        assert not CRASH_LINE.match(second_end.get("reason") or ""), second_end
    finally:
        await client.shutdown_session()
        await client.stop()
