"""Parallel reads: a turn's read-only calls run side by side; changes wait and keep the order.

The slow read is real: an MCP server's tool, declared read-only, that sleeps before answering.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.mcp.test_mcp_client import _table, _user_config
from tests.support.scripted_model import ScriptedModel

from toolgate.agent.events import EventBus
from toolgate.config import load_config
from toolgate.review.reviewer import AutoReviewer
from toolgate.session import Endpoint, RunSetup, check_trust, create_run
from toolgate.workspace import Workspace

SLEEP = 1.5


def _call(name: str, call_id: str, **arguments: object) -> dict[str, object]:
    return {"id": call_id, "name": name, "arguments": arguments}


def _spans(marker: Path) -> dict[str, tuple[float, float]]:
    """key → (begin, end) of each slow read, as the server noted them."""
    begun: dict[str, float] = {}
    spans: dict[str, tuple[float, float]] = {}
    for line in marker.read_text().splitlines():
        what, *rest = line.split(" ")
        if what == "begin":
            begun[rest[1]] = float(rest[0])
        elif what == "end":
            spans[rest[1]] = (begun[rest[1]], float(rest[0]))
    return spans


async def test_reads_of_one_turn_overlap_and_a_change_waits_for_them(
    repo: Path, scripted: ScriptedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "notes.txt"
    _user_config(_table(marker, approval="auto"))
    scripted.script = [
        {
            "content": "",
            "tool_calls": [
                _call("echo__slow_read", "c1", key="a", seconds=SLEEP),
                _call("echo__slow_read", "c2", key="b", seconds=SLEEP),
                _call("echo__slow_read", "c3", key="c", seconds=SLEEP),
                _call("write_file", "c4", path="out.txt", content="written\n"),
                _call("read_file", "c5", path="out.txt"),
            ],
        },
        {"content": "Done."},
    ]
    config = load_config(repo)
    check_trust(repo, config)
    bus = EventBus()
    order: list[tuple[str, str]] = []
    bus.subscribe(
        lambda e: (
            order.append((e.type, e.fields["call_id"]))
            if e.type in ("tool_call_proposed", "tool_call_executed")
            else None
        )
    )
    setup = RunSetup(root=repo, config=config, reviewer=AutoReviewer(Workspace(repo)), bus=bus)
    run = await create_run(setup, "read three things", Endpoint(scripted.base_url, scripted.model))
    outcome = await run.run()
    await run.model.close()
    assert outcome.status == "completed", outcome

    spans = _spans(marker)
    assert set(spans) == {"a", "b", "c"}
    # Every read began before any of them ended: the three ran at the same time.
    assert max(begin for begin, _ in spans.values()) < min(end for _, end in spans.values())
    # Together they took about the time of one, far from the three in a row.
    whole = max(e for _, e in spans.values()) - min(b for b, _ in spans.values())
    assert whole < 2 * SLEEP
    # The change waited for every read before it, and the read after it saw the change.
    executed = [call for kind, call in order if kind == "tool_call_executed"]
    assert executed.index("c4") > max(executed.index(c) for c in ("c1", "c2", "c3"))
    assert order.index(("tool_call_proposed", "c5")) > order.index(("tool_call_executed", "c4"))
    # The run log and the results sent back keep the model's order.
    log = json.loads(Path(outcome.log_path or "").read_text())
    assert [c["id"] for c in log["steps"][0]["calls"]] == ["c1", "c2", "c3", "c4", "c5"]
    results = [m for m in scripted.requests[1]["messages"] if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in results] == ["c1", "c2", "c3", "c4", "c5"]
    assert json.loads(results[4]["content"])["data"]["content"] == "written\n"
    assert [json.loads(m["content"])["success"] for m in results] == [True] * 5
