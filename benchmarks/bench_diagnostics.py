"""1,000 failing tests → diagnostics: time after pytest exits, and the result plugin's overhead.

`.venv/bin/python benchmarks/bench_diagnostics.py [--tests 1000] [--rounds 3]` generates a suite
of failing tests (10 files, each failure an assertion with a message) and measures:

(a) from pytest's exit to the last `textDocument/publishDiagnostics` written: the real
    module-level language server, initialized in-process on an in-memory transport, runs the
    suite through its *Run Tests* command (`run_tests_command` → `run_pytest` → the report
    plugin → `publish_test_failures`); the clock starts when the pytest process has exited and
    its output is read (target ≤ 200 ms);
(b) the report plugin's overhead: the same pytest command with and without
    `-p toolgate_pytest_report`, alternating, third-party plugins off (target ≤ 10 % of
    pytest's own time).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

FILES = 10


class CaptureWriter:
    """An in-memory transport that notes when diagnostics are published."""

    def __init__(self) -> None:
        self.published_at = 0.0
        self.diagnostics = 0

    def write(self, data: bytes) -> None:
        """Take one message."""
        if b'"textDocument/publishDiagnostics"' in data:
            self.published_at = time.perf_counter()
            body = data[data.index(b"{") :]
            self.diagnostics += len(json.loads(body)["params"]["diagnostics"])

    def close(self) -> None:
        """Nothing to close."""


def generate(root: Path, count: int) -> None:
    """A suite of `count` failing tests in FILES files."""
    per_file = count // FILES
    for f in range(FILES):
        lines = ["import pytest\n\n"]
        for t in range(per_file):
            lines.append(
                f"def test_case_{t}():\n"
                f"    expected = {{'file': {f}, 'case': {t}}}\n"
                f"    assert expected == {{'file': {f}, 'case': {t + 1}}}, 'case {t} drifted'\n\n"
            )
        (root / f"test_suite_{f}.py").write_text("".join(lines))


async def after_exit(root: Path, count: int) -> tuple[float, float]:
    """(a): seconds from pytest's exit to the last diagnostics, and pytest's own wall time."""
    import toolgate.testing.runner as runner_module
    from toolgate.lsp.convert import path_to_uri
    from toolgate.lsp.server import server

    writer = CaptureWriter()
    server.protocol.set_writer(writer)
    exited = {"at": 0.0, "took": 0.0, "results_at": 0.0}
    original = runner_module.run_process

    async def timed_run_process(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        outcome = await original(*args, **kwargs)
        exited["at"] = time.perf_counter()
        exited["took"] = exited["at"] - started
        return outcome

    runner_module.run_process = timed_run_process  # type: ignore[assignment]
    original_pytest = runner_module.run_pytest

    async def timed_run_pytest(*args: Any, **kwargs: Any) -> Any:
        test_run = await original_pytest(*args, **kwargs)
        exited["results_at"] = time.perf_counter()
        return test_run

    runner_module.run_pytest = timed_run_pytest  # type: ignore[assignment]

    def handle(message: dict[str, Any]) -> None:
        server.protocol.handle_message(server.protocol.structure_message(message))

    handle(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": path_to_uri(root),
                "capabilities": {},
                "workspaceFolders": [{"uri": path_to_uri(root), "name": "bench"}],
            },
        }
    )
    handle({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    await asyncio.sleep(0)
    result = await server.run_tests_command("pytest -q -p no:cacheprovider")
    assert result["summary"]["failed"] == count, result["summary"]
    assert writer.diagnostics == count, writer.diagnostics
    print(
        f"    report read and parsed: {(exited['results_at'] - exited['at']) * 1000:.0f} ms; "
        f"diagnostics built and sent: {(writer.published_at - exited['results_at']) * 1000:.0f} ms"
    )
    return writer.published_at - exited["at"], exited["took"]


async def plugin_overhead(root: Path) -> tuple[float, float]:
    """(b): wall seconds of pytest without and with the report plugin."""
    from toolgate.runner.process import run_process
    from toolgate.testing.runner import PLUGIN_MODULE, REPORT_ENV_VAR, _python_path

    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    plain = await run_process(base, root, timeout_seconds=600, max_output_bytes=64_000)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = {"PYTHONPATH": _python_path(), REPORT_ENV_VAR: str(report)}
        argv = [*base[:3], "-p", PLUGIN_MODULE, *base[3:]]
        withp = await run_process(argv, root, timeout_seconds=600, max_output_bytes=64_000, env=env)
        assert report.exists()
    assert plain.exit_code == withp.exit_code == 1
    return plain.duration_seconds, withp.duration_seconds


def main() -> int:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        generate(root, args.tests)
        print(f"{args.tests} failing tests; load average {os.getloadavg()[0]:.1f}")
        ratios = []
        for round_ in range(args.rounds):
            plain, withp = asyncio.run(plugin_overhead(root))
            ratios.append(withp / plain - 1)
            print(
                f"round {round_ + 1}: pytest {plain:.2f} s, with the report plugin "
                f"{withp:.2f} s, overhead {100 * (withp / plain - 1):+.1f} %"
            )
        overhead = statistics.median(ratios) * 100 if ratios else 0.0
        latency, took = asyncio.run(after_exit(root, args.tests))
    print(f"(b) the plugin's overhead, median: {overhead:+.1f} % (target ≤ 10 %)")
    print(
        f"(a) pytest exit → last diagnostics published: {latency * 1000:.0f} ms "
        f"(target ≤ 200 ms); that pytest run took {took:.2f} s"
    )
    return 0 if latency <= 0.2 and overhead <= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
