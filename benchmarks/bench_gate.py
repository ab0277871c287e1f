"""The gate's own time per call in a 200-call run against a model that answers at once.

`.venv/bin/python benchmarks/bench_gate.py [--calls 200] [--per-turn 10]` runs a real run (the
real `openai` client over HTTP against the scripted server on 127.0.0.1, answering at once):
turns of `read_file` and `list_directory` calls on distinct small files. For every call it
times the agent loop's `_gate` (argument validation, repeat guard, the gate's decision, events
and their sinks, the activity) and, inside it, the activity itself; the gate's own time is the
difference. Prints p50 / p95 / max of the gate's own wall and CPU time (target: p50 ≤ 2 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))

from tests.support.scripted_model import ScriptedModel  # noqa: E402

from toolgate.agent.events import EventBus  # noqa: E402
from toolgate.agent.loop import AgentRun  # noqa: E402
from toolgate.config import load_config  # noqa: E402
from toolgate.review.reviewer import AutoReviewer  # noqa: E402
from toolgate.session import Endpoint, RunSetup, create_run  # noqa: E402
from toolgate.tools import builtins  # noqa: E402
from toolgate.workspace import Workspace  # noqa: E402

gate_wall: list[float] = []
gate_cpu: list[float] = []
activity_wall: list[float] = []
activity_cpu: list[float] = []


def _instrument() -> None:
    original_gate = AgentRun._gate

    async def timed_gate(self: AgentRun, call: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        before = len(activity_wall)
        outcome = await original_gate(self, call)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        inner_wall = sum(activity_wall[before:])
        inner_cpu = sum(activity_cpu[before:])
        gate_wall.append(wall - inner_wall)
        gate_cpu.append(cpu - inner_cpu)
        return outcome

    AgentRun._gate = timed_gate  # type: ignore[method-assign]
    for cls in (builtins.ReadFile, builtins.ListDirectory):
        original_run = cls.run

        def make(original: Any) -> Any:
            async def timed_run(self: Any, ctx: Any, args: dict[str, Any]) -> Any:
                wall, cpu = time.perf_counter(), time.process_time()
                result = await original(self, ctx, args)
                activity_wall.append(time.perf_counter() - wall)
                activity_cpu.append(time.process_time() - cpu)
                return result

            return timed_run

        cls.run = make(original_run)  # type: ignore[method-assign]


def _script(count: int, per_turn: int) -> list[dict[str, Any]]:
    turns = []
    for start in range(0, count, per_turn):
        turn = []
        for n in range(start, min(count, start + per_turn)):
            if n % 2:
                name, arguments = "list_directory", {"path": f"d{n}"}
            else:
                name, arguments = "read_file", {"path": f"f{n}.py"}
            turn.append({"id": f"c{n}", "name": name, "arguments": arguments})
        turns.append({"tool_calls": turn})
    return [*turns, {"content": "Done."}]


async def _run(root: Path, scripted: ScriptedModel, count: int) -> str:
    config = load_config(
        root, overrides={"limits": {"max_steps": count + 10, "max_llm_calls": count + 10}}
    )
    setup = RunSetup(
        root=root, config=config, reviewer=AutoReviewer(Workspace(root)), bus=EventBus()
    )
    run = await create_run(setup, "Read everything.", Endpoint(scripted.base_url, "m"))
    try:
        outcome = await run.run()
    finally:
        await run.model.close()
    return outcome.status


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> int:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--per-turn", type=int, default=10)
    args = parser.parse_args()
    _instrument()
    with tempfile.TemporaryDirectory() as folder, ScriptedModel() as scripted:
        root = Path(folder)
        for n in range(args.calls):
            (root / f"f{n}.py").write_text(f"value_{n} = {n}\n" * 20)
            (root / f"d{n}").mkdir()
            (root / f"d{n}" / "a.txt").write_text("a\n")
        scripted.script = _script(args.calls, args.per_turn)
        status = asyncio.run(_run(root, scripted, args.calls))
    assert status == "completed", status
    assert len(gate_wall) == args.calls, len(gate_wall)
    p50 = statistics.median(gate_wall) * 1000
    print(f"{args.calls} calls, {args.per_turn} per turn; load average {os.getloadavg()[0]:.1f}")
    print(
        f"gate's own time per call, wall: p50 {p50:.3f} ms, p95 {_ms(gate_wall, 0.95):.3f} ms, "
        f"max {max(gate_wall) * 1000:.3f} ms"
    )
    print(
        f"gate's own time per call, CPU:  p50 {statistics.median(gate_cpu) * 1000:.3f} ms, "
        f"p95 {_ms(gate_cpu, 0.95):.3f} ms"
    )
    print(
        f"the activity (read_file / list_directory), wall: p50 "
        f"{statistics.median(activity_wall) * 1000:.3f} ms"
    )
    print("target: p50 ≤ 2 ms:", "met" if p50 <= 2 else "NOT met")
    return 0 if p50 <= 2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
