"""Faults injected into runs through the scripted model server over real HTTP.

Each fault must end the run with a clear status and reason, a valid run log on disk that says
the same, no traceback reaching the caller, and nothing half-written or left behind in the
workspace. The tally is printed at the end (`pytest tests/faults -s`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import answer, calls, drive, snapshot
from tests.support.scripted_model import ScriptedModel

TALLY: Counter[str] = Counter()
STATUSES = {"completed", "incomplete", "failed", "limit_reached", "blocked_by_policy", "cancelled"}


@pytest.fixture(scope="module", autouse=True)
def _print_tally() -> Iterator[None]:
    yield
    print(f"\nfaults injected: {TALLY['injected']}, survived: {TALLY['survived']}")


def _write(path: str, content: str, id_: str = "w") -> dict[str, Any]:
    return {"id": id_, "name": "write_file", "arguments": {"path": path, "content": content}}


def _always_read(body: dict[str, Any]) -> dict[str, Any]:
    # A new spelling of the same path each turn, so no repeat guard stops it: only the limits.
    n = len(body.get("messages", []))
    return calls(("read_file", {"path": "./" * n + "README.md"}))


FAULTS: dict[str, dict[str, Any]] = {
    "http_500": {"script": [{"status": 500, "error": "upstream exploded"}] * 3},
    "http_429_then_ok": {
        "script": [
            {"status": 429, "error": "slow down", "headers": {"Retry-After": "1"}},
            answer("after the wait"),
        ],
        "status": "completed",
    },
    "http_429_twice": {
        "script": [{"status": 429, "error": "slow down", "headers": {"Retry-After": "1"}}] * 2,
    },
    "timeout": {
        "script": [{"sleep": 4, "content": "too late"}] * 2,
        "overrides": {"model": {"timeout_seconds": 1.0}},
    },
    "stream_cut_inside_a_call": {
        "script": [
            {"tool_calls": [_write("new.txt", "x" * 200)], "cut_after": 3},
            answer(),
        ],
        "status": "incomplete",
    },
    "non_json_arguments": {
        "script": [
            {"tool_calls": [{"name": "write_file", "arguments": "{path: new.txt, oops"}]},
            answer(),
        ],
        "status": "incomplete",
    },
    "ten_mb_arguments": {
        "script": [
            {"tool_calls": [_write("big.txt", "y" * (10 * 1024 * 1024))], "piece": 65536},
            answer(),
        ],
        "status": "incomplete",
    },
    "unknown_tool": {
        "script": [
            {"tool_calls": [{"name": "format_disk", "arguments": {"device": "/dev/sda"}}]},
            answer(),
        ],
    },
    "tools_forever": {
        "fallback": _always_read,
        "script": [],
        "overrides": {"limits": {"max_steps": 8, "max_llm_calls": 10}},
        "status": "limit_reached",
    },
}


def _files(repo: Path) -> dict[str, Any]:
    # The root's own mtime moves when .toolgate/ is created; everything below must not.
    return {k: v for k, v in snapshot(repo).items() if v[0] != "root"}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_fault_ends_clearly_and_leaves_nothing(
    repo: Path, scripted: ScriptedModel, fault: str
) -> None:
    spec = FAULTS[fault]
    scripted.script = list(spec["script"])
    scripted.fallback = spec.get("fallback")
    before = _files(repo)
    TALLY["injected"] += 1
    driven = await drive(repo, scripted, overrides=spec.get("overrides"))
    outcome = driven.outcome
    assert outcome.status in STATUSES, outcome
    if "status" in spec:
        assert outcome.status == spec["status"], (outcome.status, outcome.reason)
    if outcome.status != "completed":
        assert outcome.reason and "Traceback" not in outcome.reason, outcome.reason
    log = json.loads(Path(outcome.log_path or "").read_text("utf-8"))
    assert log["status"] == outcome.status
    assert log["finished_at"]
    runs = Path(outcome.log_path or "").parent
    assert [p.name for p in runs.iterdir() if not p.name.endswith(".json")] == []
    # Nothing was written: every change in these faults is refused, unreadable or unreviewed.
    after = _files(repo)
    assert after == before, sorted(set(after) ^ set(before))
    TALLY["survived"] += 1
    print(f"\n{fault}: {outcome.status} ({outcome.reason})")
    if fault in ("non_json_arguments", "unknown_tool", "ten_mb_arguments"):
        results = [c for c in driven.calls() if c.get("result")]
        assert results and all(c["result"]["success"] is False for c in results), results
