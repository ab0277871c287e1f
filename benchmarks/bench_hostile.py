"""The hostile-client run as a benchmark: messages tried / answered / internal errors, peak RSS.

Starts `toolgate lsp` over real stdio, a scripted model on 127.0.0.1 that proposes a new file at
every turn (so a run and a proposal are in flight throughout), and sends every case of
`tests/lsp/hostile_cases.py`: every command and handled LSP method with wrong types, `null`,
missing and extra fields, 7 MB and 10 MB strings and 10,000-level nesting. Reports the counts
and the server's resident memory: before the run, the high-water mark (VmHWM, read from
/proc) through it, and after it.

    python benchmarks/bench_hostile.py [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.lsp.hostile_cases import (  # noqa: E402
    Tally,
    code_action_cases,
    command_cases,
    file_writer,
    initialize_params,
    notification_cases,
    protocol_cases,
    send,
)
from tests.lsp.rawclient import RawClient  # noqa: E402
from tests.support.scripted_model import ScriptedModel  # noqa: E402


def _status(pid: int, field: str) -> int:
    """A memory field of /proc/<pid>/status, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _project(root: Path) -> None:
    root.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "dev@example.com"],
        ["config", "user.name", "Dev"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
    (root / "test_ok.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=root, check=True)


async def hostile_run(root: Path, model: ScriptedModel) -> dict[str, Any]:
    """Run every case against a fresh server; counts, timings and memory."""
    from pygls.uris import from_fs_path

    root_uri = from_fs_path(str(root)) or ""
    file_uri = from_fs_path(str(root / "test_ok.py")) or ""
    client = await RawClient().start()
    assert client.process is not None
    pid = client.process.pid
    init = initialize_params(root_uri, model, "sk-bench")
    assert "result" in await client.request("initialize", init)
    await client.notify("initialized", {})
    await client.request(
        "workspace/executeCommand",
        {"command": "toolgate.ask", "arguments": [{"task": "write files"}]},
    )
    await asyncio.sleep(1.0)
    before_kib = _status(pid, "VmRSS")
    tally = Tally()
    started = time.perf_counter()
    for cases in (
        command_cases(file_uri),
        code_action_cases(file_uri),
        protocol_cases(root_uri),
        notification_cases(file_uri, root_uri),
    ):
        for case in cases:
            await send(client, case, tally)
    seconds = time.perf_counter() - started
    probe = await client.request(
        "workspace/executeCommand", {"command": "toolgate.listProposals", "arguments": []}
    )
    peak_kib = _status(pid, "VmHWM")
    after_kib = _status(pid, "VmRSS")
    alive = client.alive and "result" in probe
    await client.request("shutdown")
    await client.notify("exit")
    code = await client.close()
    return {
        "requests_tried": tally.tried,
        "requests_answered": tally.answered,
        "results": tally.results,
        "errors": {str(k): v for k, v in sorted(tally.errors.items())},
        "internal_errors": tally.internal_errors,
        "unanswered": len(tally.silent),
        "unexpected": tally.unexpected[:10],
        "notifications": tally.notifications,
        "alive_at_end": alive,
        "exit_code": code,
        "seconds": round(seconds, 1),
        "rss_before_mib": round(before_kib / 1024, 1),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "rss_after_mib": round(after_kib / 1024, 1),
    }


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ScriptedModel() as model:
        root = Path(tmp) / "project"
        _project(root)
        model.fallback = file_writer(itertools.count())
        figures = asyncio.run(hostile_run(root, model))
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"hostile client: {figures['requests_tried']} requests tried, "
            f"{figures['requests_answered']} answered ({figures['results']} results, "
            f"errors {figures['errors']}), {figures['internal_errors']} internal errors, "
            f"{figures['unanswered']} unanswered; {figures['notifications']} notifications; "
            f"alive at the end: {figures['alive_at_end']}; {figures['seconds']} s"
        )
        print(
            f"server RSS: {figures['rss_before_mib']} MiB before, peak "
            f"{figures['peak_rss_mib']} MiB through the run, {figures['rss_after_mib']} MiB after"
        )
    return 0 if figures["internal_errors"] == 0 and figures["unanswered"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
