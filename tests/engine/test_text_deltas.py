"""Streamed text coalesced for a screen: all of it, in order, at most about 20 pieces a second."""

from __future__ import annotations

import asyncio
import time

from toolgate.agent.events import ASSISTANT_TEXT, TOOL_CALL_PROPOSED, EventBus
from toolgate.session.deltas import TextDeltas


async def test_pieces_are_coalesced_and_nothing_is_lost_or_reordered() -> None:
    sent: list[tuple[float, str, str]] = []
    bus = EventBus()
    bus.subscribe(TextDeltas(lambda run, text: sent.append((time.monotonic(), run, text))))
    words = [f"w{n} " for n in range(400)]
    start = time.monotonic()
    for word in words:  # 400 pieces over about 0.4 s
        bus.emit(ASSISTANT_TEXT, "r1", text=word)
        await asyncio.sleep(0.001)
    bus.emit(TOOL_CALL_PROPOSED, "r1", tool="read_file")  # text before a call is said first
    elapsed = time.monotonic() - start
    assert "".join(text for _, _, text in sent) == "".join(words)
    assert len(sent) <= elapsed * 20 + 2
    gaps = [b - a for (a, _, _), (b, _, _) in zip(sent, sent[1:], strict=False)]
    assert all(gap >= 0.045 for gap in gaps[:-1])


async def test_the_last_piece_is_handed_on_by_the_timer() -> None:
    sent: list[str] = []
    deltas = TextDeltas(lambda run, text: sent.append(text))
    bus = EventBus()
    bus.subscribe(deltas)
    bus.emit(ASSISTANT_TEXT, "r1", text="Hel")  # the first goes at once
    bus.emit(ASSISTANT_TEXT, "r1", text="lo")  # the next waits for the interval
    assert sent == ["Hel"]
    await asyncio.sleep(0.2)
    assert sent == ["Hel", "lo"]
