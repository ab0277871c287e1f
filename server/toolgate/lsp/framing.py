"""Reading `Content-Length` framed messages with a bound on what one message may cost.

pygls reads a header line of any length and then a body of whatever length the header claims,
all into memory. Here a header line is cut at `MAX_HEADER_BYTES`, and a body longer than the
limit is read through in chunks and dropped; only its first bytes are kept, so the protocol
can still tell which request to refuse.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import BinaryIO

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024
# How much of a refused body is kept to find its id.
HEAD_BYTES = 64 * 1024
CHUNK_BYTES = 64 * 1024
_CONTENT_LENGTH = re.compile(rb"content-length\s*:\s*(\d+)\s*", re.IGNORECASE)


def max_message_bytes() -> int:
    """The limit on one message's body: `TOOLGATE_MAX_MESSAGE_BYTES`, else 8 MiB."""
    raw = os.environ.get("TOOLGATE_MAX_MESSAGE_BYTES", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_MAX_MESSAGE_BYTES


@dataclass
class Frame:
    """One message: its body, or (when it was over the limit) its length and first bytes."""

    body: bytes | None
    length: int
    head: bytes = b""


ReadSome = Callable[[int], Awaitable[bytes]]


class FrameReader:
    """Splits a byte stream into frames; `read_some(n)` returns up to n bytes, b"" at the end."""

    def __init__(self, read_some: ReadSome, max_body: int) -> None:
        self._read_some = read_some
        self.max_body = max_body
        self._buffer = bytearray()
        self._eof = False

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read_some(CHUNK_BYTES)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    async def _line(self) -> bytes | None:
        """One header line; an overlong one is read through and returned cut."""
        overlong = False
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: min(end + 1, MAX_HEADER_BYTES)])
                del self._buffer[: end + 1]
                # An overlong line is no header we know, and must not read as the blank one.
                return b"overlong\r\n" if overlong else line
            if len(self._buffer) > MAX_HEADER_BYTES:
                overlong = True
                del self._buffer[:]
            if not await self._fill():
                return None

    async def read(self) -> Frame | None:
        """The next frame, or None when the stream ends."""
        while True:
            length: int | None = None
            header_bytes = 0
            while True:
                line = await self._line()
                if line is None:
                    return None
                header_bytes += len(line)
                if not line.strip():
                    if length is not None or header_bytes > MAX_HEADER_BYTES:
                        break
                    continue  # blank lines before a header
                match = _CONTENT_LENGTH.fullmatch(line)
                if match:
                    length = int(match.group(1))
            if length is None:
                log.warning("a message without Content-Length was skipped")
                continue
            if length > self.max_body:
                return await self._skip(length)
            while len(self._buffer) < length:
                if not await self._fill():
                    return None
            body = bytes(self._buffer[:length])
            del self._buffer[:length]
            return Frame(body, length)

    async def _skip(self, length: int) -> Frame:
        head = bytearray()
        left = length
        while left:
            if not self._buffer and not await self._fill():
                break
            take = min(left, len(self._buffer))
            if len(head) < HEAD_BYTES:
                head += self._buffer[: min(take, HEAD_BYTES - len(head))]
            del self._buffer[:take]
            left -= take
        return Frame(None, length, bytes(head))


def stdin_reader(stdin: BinaryIO, loop: asyncio.AbstractEventLoop) -> ReadSome:
    """`read_some` over a blocking pipe, read by a daemon thread that never holds up exit."""
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=16)

    read: Callable[[int], bytes]
    try:
        # The file descriptor itself: a thread blocked inside the buffered reader holds its
        # lock, and the interpreter aborts when it needs that lock at exit.
        fd = stdin.fileno()

        def read_fd(n: int) -> bytes:
            return os.read(fd, n)

        read = read_fd

    except (AttributeError, OSError, ValueError):
        read = getattr(stdin, "read1", stdin.read)

    def pump() -> None:
        while True:
            try:
                chunk = read(CHUNK_BYTES)
            except (OSError, ValueError):
                chunk = b""
            try:
                # Waits for room in the queue: a client that writes faster than the server
                # reads is held up by the pipe, not buffered here.
                asyncio.run_coroutine_threadsafe(queue.put(chunk), loop).result()
            except Exception:
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="toolgate-stdin", daemon=True).start()

    async def read_some(_n: int) -> bytes:
        return await queue.get()

    return read_some


async def serve_frames(
    reader: FrameReader, handle: Callable[[Frame], None], stop: threading.Event
) -> None:
    """Hand each frame to `handle` until the stream ends or `stop` is set."""
    while not stop.is_set():
        frame = await reader.read()
        if frame is None:
            return
        try:
            handle(frame)
        except Exception:  # one message must never end the server
            log.exception("a message could not be handled")
