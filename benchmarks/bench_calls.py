"""Text protocol parser throughput: a ~1 MB answer holding 100 calls in mixed syntaxes.

The prose between calls mixes plain sentences with what model answers hold: inline code,
lists, Markdown links, HTML-ish tags, non-ASCII, code fences and Python prompts (`>>>`).

Run: .venv/bin/python benchmarks/bench_calls.py
Targets (issue 3): one-shot >= 20 MB/s; fed in 16-byte chunks <= 2x the one-shot time.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time

from toolgate.calls import StreamingCallParser, default_tool_schemas, parse_text

TARGET_BYTES = 1_000_000
CALLS = 100
CHUNK = 16
ROUNDS = 15

PROSE = [
    "The function reads the configuration once and caches it; every later call returns the "
    "cached value, which is why the test that changes the environment sees stale data. ",
    "I will change the loader so that it checks the file's modification time, and add a test "
    "that writes a new value, waits, and reads it back (see `load_config()` in `config.py`). ",
    "- keep the public signature\n- add a `reload` flag\n- document it in the README\n",
    "Note that 2 < 3 and {braces} or [brackets] in prose are not calls; neither is a "
    "[markdown link](https://example.com) nor an <em>inline tag</em>. ",
    "Voilà: the naïve approach costs O(n²) — 日本語のテキストも問題ありません。 ",
    "Before changing anything I want to see how the cache is used by the request handlers, "
    "because a fix in the wrong layer would hide the problem instead of solving it. ",
    "The failing test expects the second read to return the new value; with the cache in "
    "place it returns the old one, so the assertion on line 42 fails as reported. ",
    "Once the change is in, I will run the whole suite again to make sure nothing else "
    "depended on the old behaviour, and then commit with a short message. ",
    "\n\n",
    "\n```python\ndef load(path):\n    with open(path) as fh:\n        return fh.read()\n```\n",
    "\n>>> print('a python prompt, not an arrow block')\n",
]


def call_text(i: int, rnd: random.Random) -> str:
    path = f"src/module_{i}.py"
    content = "".join(f"def f{j}(x):\n    return x * {j}  # {'é' * (j % 3)}\n" for j in range(20))
    kinds = [
        lambda: f'<tool name="read_file" args>{json.dumps({"path": path})}</tool>',
        lambda: (
            '<tool name="write_file" args>'
            + json.dumps({"path": path, "content": content})
            + "</tool>"
        ),
        lambda: f"<tool:read_file>{json.dumps({'path': path})}</tool>",
        lambda: f"\n>>> RUN COMMAND\npytest -q tests/test_{i}.py\n",
        lambda: f"\n>>> WRITE FILE: {path}\n```python\n{content}```\n",
        lambda: (
            "<tool_call>\n"
            + json.dumps({"name": "read_file", "arguments": {"path": path}})
            + "\n</tool_call>"
        ),
        lambda: (
            f"<function=write_file>\n<parameter=path>\n{path}\n</parameter>\n"
            f"<parameter=content>\n{content}\n</parameter>\n</function>"
        ),
        lambda: "[TOOL_CALLS]" + json.dumps([{"name": "read_file", "arguments": {"path": path}}]),
        lambda: "\n" + json.dumps({"name": "read_file", "parameters": {"path": path}}) + "\n",
        lambda: f'\n[read_file(path="{path}"), git_status()]\n',
        lambda: f"<write_file><path>{path}</path><content>\n{content}</content></write_file>",
        lambda: (
            "\n```json\n"
            + json.dumps({"name": "read_file", "arguments": {"path": path}})
            + "\n```\n"
        ),
    ]
    return kinds[i % len(kinds)]()


def build_answer(seed: int = 3) -> str:
    rnd = random.Random(seed)
    calls = [call_text(i, rnd) for i in range(CALLS)]
    call_bytes = sum(len(c.encode()) for c in calls)
    per_gap = (TARGET_BYTES - call_bytes) // (CALLS + 1)
    parts: list[str] = []
    for i in range(CALLS + 1):
        gap: list[str] = []
        size = 0
        while size < per_gap:
            piece = rnd.choice(PROSE)
            gap.append(piece)
            size += len(piece.encode())
        parts.append("".join(gap) + "\n")
        if i < CALLS:
            parts.append(calls[i] + "\n")
    return "".join(parts)


class StoreOnly:
    """The least a streaming parser's `feed` can do: look for a marker, store the chunk."""

    __slots__ = ("chunks",)

    def __init__(self) -> None:
        self.chunks: list[str] = []

    def feed(self, chunk: str) -> list[str]:
        """Store the chunk after the four `in` tests the parser's cheapest path makes."""
        if "<" not in chunk and "`" not in chunk and "[" not in chunk and "\n" not in chunk:
            self.chunks.append(chunk)
            return []
        self.chunks.append(chunk)
        return []


def best_of(n: int, fn) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(n):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def main() -> int:
    tools = default_tool_schemas()
    text = build_answer()
    size_mb = len(text.encode()) / 1e6
    result = parse_text(text, tools)
    n_calls = len(result.calls)

    chunks = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]

    def chunked(take_content: bool) -> None:
        parser = StreamingCallParser(tools)
        got = 0
        for chunk in chunks:
            got += len(parser.feed(chunk))
            if take_content:
                parser.take_content()
        got += len(parser.finish())
        assert got == n_calls + len(result.errors)
        assert parser.content == result.content

    def bare_loop() -> None:
        sink: list[str] = []
        for chunk in chunks:
            sink.append(chunk)

    def store_only() -> None:
        parser = StoreOnly()
        got = 0
        for chunk in chunks:
            got += len(parser.feed(chunk))

    # Interleaved rounds, so both sides see the same machine; best of each, and the
    # median of the per-round ratios (a shared machine's load moves both together).
    one_shots: list[float] = []
    streams: list[float] = []
    for _ in range(ROUNDS):
        one_shots.append(best_of(1, lambda: parse_text(text, tools)))
        streams.append(best_of(1, lambda: chunked(False)))
    one_shot, streamed = min(one_shots), min(streams)
    round_ratio = statistics.median(s / o for s, o in zip(streams, one_shots, strict=True))
    streamed_take = best_of(5, lambda: chunked(True))
    floor = best_of(5, bare_loop)
    store = best_of(5, store_only)
    mbps = size_mb / one_shot
    ratio = streamed / one_shot
    print(f"answer: {size_mb:.2f} MB, {n_calls} calls, {len(result.errors)} errors")
    print(f"CPU time of this process, best of {ROUNDS} interleaved rounds:")
    print(f"one-shot: {one_shot * 1000:.1f} ms = {mbps:.1f} MB/s (target >= 20 MB/s)")
    print(
        f"fed in {CHUNK}-byte chunks ({len(chunks)} feeds): {streamed * 1000:.1f} ms "
        f"= {ratio:.2f}x one-shot (target <= 2x); median of per-round ratios {round_ratio:.2f}x"
    )
    print(
        f"  with take_content() after every feed: {streamed_take * 1000:.1f} ms "
        f"= {streamed_take / one_shot:.2f}x one-shot"
    )
    print(f"  (a bare loop over the chunks alone: {floor * 1000:.1f} ms)")
    print(
        f"  (a feed() that only checks and stores each chunk: {store * 1000:.1f} ms "
        f"= {store / one_shot:.2f}x one-shot, before any parsing)"
    )
    ok = mbps >= 20 and ratio <= 2 and n_calls >= CALLS
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
