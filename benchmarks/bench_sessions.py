"""Session figures: a 200-turn conversation in an 8k window.

A scripted model (real HTTP, the real `openai` client) answers each turn with one `read_file`
of a 20 KB file and then a short reply; each turn is one `toolgate.ask` of the same session,
through the session service exactly as the front ends use it. Summary requests (no tools, the
summary instruction last) are answered with a fixed note.

(a) Every request the model received, estimated the documented way (UTF-8 bytes / 3 per
    message plus 4, plus the tools' schemas), stays within the window less the answer's room.
(b) The engine's own time per turn: the turn's wall time less the time spent waiting on the
    model's stream (the scripted server's answer). p50 / p95 over turns 6–15 and 191–200
    (the first turns also pay for imports and warm caches),
    pooled over the rounds; target: ratio at turn 200 to turn 10 ≤ 1.5.
(c) Loading the 200-turn session: reading and checking the file and rebuilding the
    conversation (what `claim` does), and the transcript a client draws (what
    `toolgate.loadSession` answers). Median of 20, wall and CPU time (the process's own, which
    the load of a shared machine does not inflate); target ≤ 50 ms.

Run: .venv/bin/python benchmarks/bench_sessions.py [--turns 200] [--rounds 2]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.scripted_model import ScriptedModel  # noqa: E402

from toolgate.agent.events import EventBus  # noqa: E402
from toolgate.config import load_config  # noqa: E402
from toolgate.conversation.budget import SUMMARY_INSTRUCTION, Budget, message_bytes  # noqa: E402
from toolgate.conversation.history import Conversation  # noqa: E402
from toolgate.model import client as model_client  # noqa: E402
from toolgate.review.reviewer import AutoReviewer  # noqa: E402
from toolgate.session import Endpoint, SessionService  # noqa: E402
from toolgate.workspace import Workspace  # noqa: E402

WINDOW = 8192
OUTPUT_BYTES = 20_000


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: read the file, then reply; summarise when asked."""
    last = body["messages"][-1]
    if SUMMARY_INSTRUCTION in str(last.get("content")):
        return {"content": "Notes: each turn the person asked to read data.txt; it was read."}
    if last["role"] == "tool":
        return {"content": "Read it: 400 lines of data."}
    return {"tool_calls": [{"name": "read_file", "arguments": {"path": "data.txt"}}]}


class ModelClock:
    """Adds up the time spent waiting on the model's stream."""

    def __init__(self) -> None:
        self.waiting = 0.0
        original = model_client.OpenAIChatModel.stream
        clock = self

        async def timed(self: Any, messages: Any, tools: Any) -> Any:
            iterator = original(self, messages, tools).__aiter__()
            while True:
                start = time.perf_counter()
                try:
                    delta = await iterator.__anext__()
                except StopAsyncIteration:
                    clock.waiting += time.perf_counter() - start
                    return
                clock.waiting += time.perf_counter() - start
                yield delta

        model_client.OpenAIChatModel.stream = timed  # type: ignore[method-assign]


def request_tokens(body: dict[str, Any], budget: Budget) -> int:
    """The documented estimate of one request."""
    tools = budget.tokens(len(json.dumps(body["tools"]))) if body.get("tools") else 0
    return tools + sum(budget.message_tokens(message_bytes(m)) for m in body["messages"])


def workspace() -> Path:
    """A git repository with a 20 KB file to read."""
    root = Path(tempfile.mkdtemp(prefix="toolgate-bench-sessions-")) / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", root], check=True)
    lines = [f"row {n:05d}: " + "x" * 38 for n in range(OUTPUT_BYTES // 50)]
    (root / "data.txt").write_text("\n".join(lines)[:OUTPUT_BYTES])
    return root


async def session(turns: int, clock: ModelClock) -> tuple[list[float], Path, str, ScriptedModel]:
    """Hold one conversation of `turns` turns; the engine's seconds for each turn."""
    root = workspace()
    scripted = ScriptedModel(fallback=answer, chunk=64).start()
    config = load_config(root, overrides={"model": {"context_tokens": WINDOW}})
    service = SessionService(root, lambda: config)
    endpoint = Endpoint(scripted.base_url, scripted.model)
    session_id: str | None = None
    engine: list[float] = []
    for number in range(1, turns + 1):
        clock.waiting = 0.0
        start = time.perf_counter()
        claim = service.claim(session_id, new=session_id is None)
        session_id = claim.session_id
        outcome = await service.turn(
            claim,
            f"Turn {number}: read data.txt and tell me how many lines it has.",
            config=config,
            reviewer=AutoReviewer(Workspace(root)),
            bus=EventBus(),
            endpoint=endpoint,
        )
        if outcome.status != "completed":
            raise SystemExit(f"turn {number} {outcome.status}: {outcome.reason}")
        engine.append(time.perf_counter() - start - clock.waiting)
    assert session_id is not None
    return engine, root, session_id, scripted


def load_times(root: Path, session_id: str) -> tuple[float, float, float, float, int]:
    """Median ms (wall, CPU) to rebuild the conversation and to build the transcript; size."""
    service = SessionService(root, lambda: load_config(root))
    path = service.store.path(session_id)
    rebuild, rebuild_cpu, drawn, drawn_cpu = [], [], [], []
    for _ in range(20):
        start, start_cpu = time.perf_counter(), time.process_time()
        file = service.store.open(session_id)
        Conversation.from_loaded(file.load(root), file)
        rebuild.append(time.perf_counter() - start)
        rebuild_cpu.append(time.process_time() - start_cpu)
        start, start_cpu = time.perf_counter(), time.process_time()
        loaded = service.load(session_id)
        drawn.append(time.perf_counter() - start)
        drawn_cpu.append(time.process_time() - start_cpu)
        assert loaded["transcript"]
    ms = [statistics.median(v) * 1000 for v in (rebuild, rebuild_cpu, drawn, drawn_cpu)]
    return ms[0], ms[1], ms[2], ms[3], path.stat().st_size


def pct(values: list[float], q: float) -> float:
    """The q-th quantile in ms."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    """Run the session and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    clock = ModelClock()
    early: list[float] = []
    late: list[float] = []
    budget = Budget(window=WINDOW)
    worst = 0
    summaries = 0
    requests = 0
    for _ in range(args.rounds):
        engine, root, session_id, scripted = asyncio.run(session(args.turns, clock))
        scripted.stop()
        early += engine[5:15]
        late += engine[-10:]
        work = [b for b in scripted.requests if b.get("tools")]
        requests += len(work)
        summaries += len(scripted.requests) - len(work)
        worst = max(worst, max(request_tokens(b, budget) for b in work))
    rebuild_ms, rebuild_cpu, drawn_ms, drawn_cpu, size = load_times(root, session_id)
    p50_early, p95_early = pct(early, 0.5), pct(early, 0.95)
    p50_late, p95_late = pct(late, 0.5), pct(late, 0.95)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.rounds} rounds of {args.turns} turns")
    print(
        f"(a) {requests} requests, largest {worst} tokens (estimated) of the {budget.limit} "
        f"a request may hold in an {WINDOW}-token window; {summaries} summary calls"
    )
    print(
        f"(b) engine time per turn: turns 6-15 p50 {p50_early:.1f} ms p95 {p95_early:.1f} ms; "
        f"turns {args.turns - 9}-{args.turns} p50 {p50_late:.1f} ms p95 {p95_late:.1f} ms; "
        f"ratio p50 {p50_late / p50_early:.2f}, p95 {p95_late / p95_early:.2f}"
    )
    print(
        f"(c) loading the {args.turns}-turn session ({size / 1e6:.2f} MB), median of 20: "
        f"conversation {rebuild_ms:.1f} ms (CPU {rebuild_cpu:.1f} ms), transcript "
        f"{drawn_ms:.1f} ms (CPU {drawn_cpu:.1f} ms)"
    )
    if worst > budget.limit:
        raise SystemExit("a request exceeded the budget")


if __name__ == "__main__":
    main()
