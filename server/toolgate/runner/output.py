"""Capping command output: keep the head and a generous tail, never split a UTF-8 character."""

from __future__ import annotations

# The tail of a test run holds its summary and the last tracebacks, so it gets most of the budget.
TAIL_SHARE = 0.65

# How far back (as a share of the piece) a cut may move to land on a line break.
_LINE_SNAP_SHARE = 0.2


def _marker(omitted: int) -> bytes:
    return f"\n… [{omitted} bytes omitted] …\n".encode()


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _head_end(data: bytes, limit: int) -> int:
    """Where to cut the head so it is at most `limit` bytes and ends on a character boundary."""
    end = min(limit, len(data))
    if end < len(data):
        while end > 0 and _is_continuation(data[end]):
            end -= 1
    newline = data.rfind(b"\n", 0, end)
    if newline >= 0 and end - (newline + 1) <= end * _LINE_SNAP_SHARE:
        return newline + 1
    return end


def _tail_start(data: bytes, limit: int) -> int:
    """Where to start the tail so it is at most `limit` bytes and starts on a character boundary."""
    start = max(0, len(data) - limit)
    while start < len(data) and _is_continuation(data[start]):
        start += 1
    if start > 0 and data[start - 1 : start] != b"\n":
        newline = data.find(b"\n", start)
        if newline >= 0 and newline + 1 - start <= (len(data) - start) * _LINE_SNAP_SHARE:
            return newline + 1
    return start


def compose_capped(head: bytes, tail: bytes, total: int, max_bytes: int) -> bytes:
    """Join the first bytes and the last bytes of a stream of `total` bytes within `max_bytes`.

    `head` must hold at least the first `max_bytes` bytes of the stream (or all of it) and `tail`
    at least the last `max_bytes` bytes; when the stream fits, `head` is returned as it is.
    """
    if total <= max_bytes:
        return head[:total]
    # The marker's length depends on the number it shows; the total bounds that number.
    budget = max_bytes - len(_marker(total))
    if budget <= 0:
        # Too small for a marker: the tail alone is the most useful thing to keep.
        start = _tail_start(tail, max(max_bytes, 0))
        return tail[start:]
    tail_budget = int(budget * TAIL_SHARE)
    head_budget = budget - tail_budget
    head_part = head[: _head_end(head, head_budget)]
    tail_part = tail[_tail_start(tail, tail_budget) :]
    omitted = total - len(head_part) - len(tail_part)
    return head_part + _marker(omitted) + tail_part


def cap_output(text: str, max_bytes: int) -> tuple[str, bool, int]:
    """Keep head and tail of `text` within `max_bytes` (UTF-8) with an omission marker between.

    Returns (text, truncated, original_size_bytes).
    """
    data = text.encode("utf-8", errors="replace")
    size = len(data)
    if size <= max_bytes:
        return text, False, size
    capped = compose_capped(data, data, size, max_bytes)
    return capped.decode("utf-8", errors="replace"), True, size


class OutputCapture:
    """Collects a byte stream within bounded memory: the head plus a rolling tail."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max(0, max_bytes)
        self.total = 0
        self._head = bytearray()
        self._tail = bytearray()

    def feed(self, chunk: bytes) -> None:
        """Add the next piece of the stream."""
        self.total += len(chunk)
        room = self.max_bytes - len(self._head)
        if room > 0:
            self._head += chunk[:room]
        self._tail += chunk
        excess = len(self._tail) - self.max_bytes
        if excess > 0:
            del self._tail[:excess]

    @property
    def truncated(self) -> bool:
        """Whether the stream so far is larger than the cap."""
        return self.total > self.max_bytes

    def text(self) -> str:
        """The capped stream, decoded as UTF-8 (invalid bytes replaced)."""
        data = compose_capped(bytes(self._head), bytes(self._tail), self.total, self.max_bytes)
        return data.decode("utf-8", errors="replace")
