"""Language-server figures: proposal latency, `initialize` time, idle memory.

(a) A 10,000-line file open in the editor, the model rewrites it with 10 lines changed: the
    server time from the tool call entering the gate (validation included, exactly what the
    agent loop does with a parsed call) to the `toolgate/proposal` notification written to the
    transport. Measured in-process: the real module-level server, initialized and fed
    `didOpen` through its own protocol, writes to an in-memory transport.
(b) `initialize` answered, from the start of `python -m toolgate lsp`: wall time, and the
    child's own CPU time at that moment (which the machine's load does not inflate).
    For comparison, the same for a bare pygls LanguageServer: what pygls costs on this machine.
(c) RSS of that idle server once initialized (VmRSS from /proc/PID/status).

Run: .venv/bin/python benchmarks/bench_lsp.py [--rounds N]
Targets (issue 4): (a) <= 20 ms; (b) <= 300 ms; (c) <= 80 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LINES = 10_000
CHANGED = 10


def _frame(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def cpu_reference() -> tuple[float, float]:
    """Wall and CPU seconds of a fixed pure-Python loop: how fast this machine is right now."""
    start, start_cpu = time.perf_counter(), time.process_time()
    sum(range(10_000_000))
    return time.perf_counter() - start, time.process_time() - start_cpu


class CaptureWriter:
    """An in-memory transport that notes when the proposal notification is written."""

    def __init__(self) -> None:
        self.proposal_at: float | None = None
        self.proposal_cpu_at = 0.0
        self.proposals = 0

    def write(self, data: bytes) -> None:
        """Take one message."""
        if b'"toolgate/proposal"' in data:
            self.proposal_at = time.perf_counter()
            self.proposal_cpu_at = time.process_time()
            self.proposals += 1

    def close(self) -> None:
        """Nothing to close."""


def _message(method: str, params: Any, msg_id: int | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        message["id"] = msg_id
    return message


async def proposal_latency(rounds: int) -> tuple[list[float], list[float]]:
    """(a): wall and CPU milliseconds from the call entering the gate to the proposal sent."""
    from toolgate.agent.events import EventBus
    from toolgate.config import load_config
    from toolgate.lsp.convert import path_to_uri
    from toolgate.lsp.server import server
    from toolgate.records import ToolCall
    from toolgate.session import Endpoint, RunSetup, create_run

    writer = CaptureWriter()
    server.protocol.set_writer(writer)

    def handle(message: dict[str, Any]) -> None:
        server.protocol.handle_message(server.protocol.structure_message(message))

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        text = "".join(f"value_{i} = compute({i})  # line {i}\n" for i in range(LINES))
        (root / "big.py").write_text(text)
        uri = path_to_uri(root / "big.py")
        capabilities = {
            "workspace": {
                "applyEdit": True,
                "workspaceEdit": {
                    "documentChanges": True,
                    "resourceOperations": ["create"],
                    "changeAnnotationSupport": {"groupsOnLabel": True},
                },
            },
            "window": {"workDoneProgress": True},
        }
        handle(
            _message(
                "initialize",
                {
                    "processId": None,
                    "rootUri": path_to_uri(root),
                    "capabilities": capabilities,
                    "workspaceFolders": [{"uri": path_to_uri(root), "name": "bench"}],
                },
                1,
            )
        )
        handle(_message("initialized", {}))
        handle(
            _message(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
            )
        )
        await asyncio.sleep(0)
        assert server.reviewer is not None
        setup = RunSetup(
            root=root,
            config=load_config(root),
            reviewer=server.reviewer,
            bus=EventBus(),
            buffers=server.buffers,
        )
        # No request reaches this endpoint: the gate is driven directly.
        endpoint = Endpoint("http://127.0.0.1:9/v1", "bench-model")
        run = await create_run(setup, "benchmark", endpoint, run_id="r-bench")
        lines = text.splitlines(keepends=True)
        step = LINES // CHANGED
        for n in range(CHANGED):
            at = n * step + step // 2
            lines[at] = lines[at].replace("compute(", "compute_fast(")
        proposed = "".join(lines)

        times: list[float] = []
        cpu_times: list[float] = []
        for i in range(rounds + 1):
            call = ToolCall(
                id=f"call-{i}",
                name="write_file",
                arguments={"path": "big.py", "content": proposed},
            )
            writer.proposal_at = None
            started = started_cpu = 0.0

            async def through_gate(call: ToolCall = call) -> Any:
                nonlocal started, started_cpu
                started = time.perf_counter()
                started_cpu = time.process_time()
                return await run._gate(call)

            task = asyncio.ensure_future(through_gate())
            while writer.proposal_at is None:
                await asyncio.sleep(0)
                if task.done():
                    raise RuntimeError(f"no proposal was sent: {task.result()}")
            elapsed = (writer.proposal_at - started) * 1000
            elapsed_cpu = (writer.proposal_cpu_at - started_cpu) * 1000
            (pending,) = list(server.reviewer.pending)
            server.reviewer.reject(pending, "benchmark")
            outcome = await task
            assert outcome.result.data["hunks_total"] == CHANGED, outcome.result
            if i:  # the first round warms caches (regex compilation, imports)
                times.append(elapsed)
                cpu_times.append(elapsed_cpu)
        return times, cpu_times


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _read_message(stream: Any) -> dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def _until_response(stream: Any, msg_id: int) -> dict[str, Any]:
    while True:
        message = _read_message(stream)
        if message.get("id") == msg_id and "method" not in message:
            return message


SERVER = [sys.executable, "-m", "toolgate", "lsp"]
# The same measurement for a pygls server that does nothing: what pygls itself costs here.
BARE_PYGLS = [
    sys.executable,
    "-c",
    "from pygls.lsp.server import LanguageServer; LanguageServer('bare', '0').start_io()",
]


def startup_and_memory(root: Path, command: list[str] = SERVER) -> tuple[float, float, float]:
    """(b) and (c) for one fresh server: initialize wall ms, its CPU ms, idle RSS MB."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        uri = root.as_uri()
        init = {
            "processId": os.getpid(),
            "rootUri": uri,
            "capabilities": {"workspace": {"applyEdit": True}},
            "workspaceFolders": [{"uri": uri, "name": "bench"}],
        }
        proc.stdin.write(_frame(_message("initialize", init, 1)))
        proc.stdin.flush()
        _until_response(proc.stdout, 1)
        wall = (time.perf_counter() - started) * 1000
        cpu = _cpu_seconds(proc.pid) * 1000
        proc.stdin.write(_frame(_message("initialized", {})))
        command = {"command": "toolgate.listProposals", "arguments": []}
        proc.stdin.write(_frame(_message("workspace/executeCommand", command, 2)))
        proc.stdin.flush()
        _until_response(proc.stdout, 2)
        rss = _rss_mb(proc.pid)
        proc.stdin.write(_frame(_message("shutdown", None, 3)))
        proc.stdin.flush()
        _until_response(proc.stdout, 3)
        proc.stdin.write(_frame(_message("exit", None)))
        proc.stdin.close()
        proc.wait(timeout=30)
        return wall, cpu, rss
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"median {statistics.median(ordered):.1f}, p95 {p95:.1f}, "
        f"min {ordered[0]:.1f}, max {ordered[-1]:.1f}"
    )


def main() -> int:
    """Print the three figures and the machine's state."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="proposal rounds (default 20)")
    parser.add_argument("--starts", type=int, default=5, help="server starts (default 5)")
    args = parser.parse_args()

    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f}")
    wall, cpu = cpu_reference()
    print(f"reference loop sum(range(1e7)): wall {wall * 1000:.0f} ms, CPU {cpu * 1000:.0f} ms")

    latency, latency_cpu = asyncio.run(proposal_latency(args.rounds))
    print(
        f"(a) tool call -> toolgate/proposal, {LINES:,}-line open file, {CHANGED} changed "
        f"lines, {len(latency)} rounds (ms): wall {_summary(latency)}; "
        f"CPU {_summary(latency_cpu)}  [target <= 20]"
    )

    walls, cpus, rsss = [], [], []
    bare_walls, bare_cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.starts):  # interleaved, so both see the same machine
            start_wall, start_cpu, rss = startup_and_memory(Path(tmp))
            walls.append(start_wall)
            cpus.append(start_cpu)
            rsss.append(rss)
            bare_wall, bare_cpu, _ = startup_and_memory(Path(tmp), BARE_PYGLS)
            bare_walls.append(bare_wall)
            bare_cpus.append(bare_cpu)
    print(
        f"(b) initialize answered from process start, {len(walls)} starts (ms): wall "
        f"{_summary(walls)}; server CPU {_summary(cpus)}  [target <= 300]"
    )
    print(
        f"    a pygls server that does nothing, the same way (ms): wall {_summary(bare_walls)}; "
        f"CPU {_summary(bare_cpus)}"
    )
    print(f"(c) idle RSS after initialize (MB): {_summary(rsss)}  [target <= 80]")
    wall, cpu = cpu_reference()
    print(f"reference loop after: wall {wall * 1000:.0f} ms, CPU {cpu * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
