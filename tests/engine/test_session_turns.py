"""`SessionService.turn`: the one turn every front end runs — set up, run, end, release."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from tests.support.processes import alive
from tests.support.scripted_model import ScriptedModel

from toolgate.agent.events import RUN_FINISHED, Event, EventBus
from toolgate.config import load_config
from toolgate.records import ToolCall, ToolResult
from toolgate.review.reviewer import AutoReviewer
from toolgate.session import Endpoint, SessionService, SetupError, TurnHooks
from toolgate.workspace import Workspace

STUCK = Path(__file__).resolve().parents[1] / "lsp" / "stuck_mcp_server.py"
KEY = "sk-turn-secret-0123456789"


async def _until(check: object, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():  # type: ignore[operator]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.05)


async def test_a_turn_cancelled_while_it_is_set_up_stops_its_mcp_server_and_ends_cancelled(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    marker = tmp_path / "pids.txt"
    config = load_config(repo)
    config.mcp.servers["stuck"] = {"command": [sys.executable, str(STUCK), str(marker)]}
    service = SessionService(repo, lambda: config)
    claim = service.claim(new=True)
    events: list[Event] = []
    bus = EventBus()
    bus.subscribe(events.append)
    turn = asyncio.ensure_future(
        service.turn(
            claim,
            "use the stuck server",
            config=config,
            reviewer=AutoReviewer(Workspace(repo)),
            bus=bus,
            endpoint=Endpoint(scripted.base_url, scripted.model),
        )
    )
    await _until(lambda: marker.exists() and marker.read_text().strip() != "")
    claim.cancel()
    outcome = await asyncio.wait_for(turn, 60)

    assert outcome.status == "cancelled" and outcome.run_id == claim.run_id
    assert "while the run was being set up" in (outcome.reason or "")
    finished = [e for e in events if e.type == RUN_FINISHED]
    assert [(e.run_id, e.fields["status"]) for e in finished] == [(claim.run_id, "cancelled")]
    assert scripted.requests == []  # the model was never asked
    (pid,) = [int(line) for line in marker.read_text().split()]
    await _until(lambda: not alive(pid))  # what the set-up started stopped with it
    service.release(service.claim(claim.session_id))  # and the session is free again


async def test_a_turn_cancelled_before_it_began_asks_nothing(
    repo: Path, scripted: ScriptedModel
) -> None:
    config = load_config(repo)
    service = SessionService(repo, lambda: config)
    claim = service.claim(new=True)
    claim.cancel("stopped with Ctrl-C")
    outcome = await service.turn(
        claim,
        "say hello",
        config=config,
        reviewer=AutoReviewer(Workspace(repo)),
        bus=EventBus(),
        endpoint=Endpoint(scripted.base_url, scripted.model),
    )
    assert outcome.status == "cancelled"
    assert outcome.reason == "stopped with Ctrl-C while the run was being set up"
    assert scripted.requests == []
    service.release(service.claim(claim.session_id))


async def test_the_front_ends_hooks_see_each_result_without_the_key(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "notes.txt").write_text(f"the key is {KEY}\n")
    scripted.script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"content": "read it"},
    ]
    config = load_config(repo, overrides={"model": {"base_url": scripted.base_url}})
    config.api_key = KEY
    service = SessionService(repo, lambda: config)
    seen: list[tuple[ToolCall, ToolResult]] = []
    reads: list[str] = []

    async def before_read(path: str) -> None:
        reads.append(path)

    outcome = await service.turn(
        service.claim(new=True),
        "read notes.txt",
        config=config,
        reviewer=AutoReviewer(Workspace(repo)),
        bus=EventBus(),
        hooks=TurnHooks(on_result=lambda c, r: seen.append((c, r)), before_read=before_read),
        endpoint=Endpoint(scripted.base_url, scripted.model),
    )
    assert outcome.status == "completed"
    assert reads == ["notes.txt"]
    ((call, result),) = seen
    assert call.name == "read_file" and result.success
    assert "the key is" in str(result.data) and KEY not in str(result.data)
    # What the model read is the file itself: the front end's copy was redacted, not the run's.
    assert KEY in str(scripted.requests[-1])


async def test_a_turn_that_cannot_start_says_why_without_the_key_and_frees_the_session(
    repo: Path,
) -> None:
    url = f"http://127.0.0.1:9/{KEY}/v1"  # nothing listens there, and it names the key
    config = load_config(repo, overrides={"model": {"base_url": url}})
    config.api_key = KEY
    service = SessionService(repo, lambda: config)
    claim = service.claim(new=True)
    with pytest.raises(SetupError) as refused:
        await service.turn(
            claim, "hello", config=config, reviewer=AutoReviewer(Workspace(repo)), bus=EventBus()
        )
    assert "cannot reach the model" in str(refused.value) and KEY not in str(refused.value)
    service.release(service.claim(claim.session_id))
