"""The OS sandbox's cost on a run of this project's own tests: wall time with and without.

`.venv/bin/python benchmarks/bench_sandbox.py [--rounds 3] [--tests tests/runner ...]` runs the
same pytest command through `toolgate.testing.runner.run_pytest` (the path `run_tests` takes),
alternating with the sandbox and without it, and prints each round and the median ratio
(target ≤ 1.2). Exits 1 when bubblewrap does not work here or the target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from toolgate.runner.sandbox import SandboxSettings, bwrap_problem  # noqa: E402
from toolgate.testing.runner import run_pytest  # noqa: E402

# Engine-free tests that still start processes, use temporary folders and real pytest runs.
DEFAULT_TESTS = ["tests/runner", "tests/calls/test_syntaxes.py", "tests/calls/test_prompt.py"]


async def _one(tests: list[str], sandbox: SandboxSettings) -> tuple[float, int, bool]:
    started = time.perf_counter()
    run = await run_pytest(
        ROOT,
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        timeout_seconds=1800,
        sandbox=sandbox,
    )
    wall = time.perf_counter() - started
    if run.exit_code != 0:
        print(run.output[-3000:])
        raise SystemExit(f"the tests failed (exit {run.exit_code}, sandboxed={run.sandboxed})")
    return wall, run.summary.total, run.sandboxed


def main() -> int:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tests", nargs="*", default=DEFAULT_TESTS)
    args = parser.parse_args()
    problem = bwrap_problem()
    if problem is not None:
        print(f"cannot measure: {problem}")
        return 1
    print(f"tests: {' '.join(args.tests)}; load average {os.getloadavg()[0]:.1f}")
    ratios = []
    for round_ in range(args.rounds):
        plain, total, _ = asyncio.run(_one(args.tests, SandboxSettings(mode="off")))
        boxed, _, active = asyncio.run(_one(args.tests, SandboxSettings(mode="required")))
        assert active
        ratios.append(boxed / plain)
        print(
            f"round {round_ + 1}: {total} tests, without {plain:.2f} s, "
            f"with {boxed:.2f} s, ratio {boxed / plain:.3f}"
        )
    ratio = statistics.median(ratios)
    print(f"median ratio {ratio:.3f} (target ≤ 1.2); load average {os.getloadavg()[0]:.1f}")
    return 0 if ratio <= 1.2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
