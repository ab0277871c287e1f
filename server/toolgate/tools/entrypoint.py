"""A manifest tool's entrypoint: JSON on stdin, one JSON value on stdout, stderr as progress.

Like every command Toolgate runs: no shell, a new session and process group, the person's
secrets removed from the environment, a timeout that ends the whole group, and stdout capped
while it is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolgate.runner.process import StartError, signal_group, start_process

_READ_CHUNK = 65536
_STDERR_TAIL_BYTES = 4000
_TERM_GRACE_SECONDS = 2.0
# How long the pipes may stay open once the program itself has exited (a leftover child).
_EOF_GRACE_SECONDS = 1.0


@dataclass
class EntrypointOutcome:
    """How one run of an entrypoint ended."""

    exit_code: int | None
    stdout: bytes
    stdout_size_bytes: int
    stdout_truncated: bool
    stderr_tail: str
    timed_out: bool
    start_error: str | None
    duration_seconds: float


async def _read_capped(stream: asyncio.StreamReader, cap: int) -> tuple[bytes, int]:
    kept = bytearray()
    total = 0
    while True:
        chunk = await stream.read(_READ_CHUNK)
        if not chunk:
            return bytes(kept), total
        total += len(chunk)
        if len(kept) < cap:
            kept += chunk[: cap - len(kept)]


async def _read_lines(
    stream: asyncio.StreamReader, on_line: Callable[[str], None], tail: bytearray
) -> None:
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # a line longer than the reader's limit: take what is there
            line = await stream.read(_READ_CHUNK)
        if not line:
            return
        tail += line
        del tail[:-_STDERR_TAIL_BYTES]
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if text:
            with contextlib.suppress(Exception):  # a progress sink's bug must not end the tool
                on_line(text)


async def run_entrypoint(
    argv: list[str],
    cwd: Path,
    stdin: bytes,
    *,
    timeout_seconds: float,
    max_output_bytes: int,
    on_stderr: Callable[[str], None] = lambda line: None,
) -> EntrypointOutcome:
    """Run argv in cwd with `stdin`, streaming stderr lines to `on_stderr`."""
    started = time.monotonic()

    def failed(message: str) -> EntrypointOutcome:
        return EntrypointOutcome(
            None, b"", 0, False, "", False, message, time.monotonic() - started
        )

    try:
        process = await start_process(
            argv,
            cwd,
            shown=argv,
            stdin=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            what="entrypoint",
        )
    except StartError as error:
        return failed(str(error))
    assert process.stdin and process.stdout and process.stderr
    tail = bytearray()
    out_task = asyncio.ensure_future(_read_capped(process.stdout, max_output_bytes + 1))
    err_task = asyncio.ensure_future(_read_lines(process.stderr, on_stderr, tail))

    async def feed() -> None:
        assert process.stdin is not None
        # A program that never reads its input must not block us: a closed pipe is fine.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(stdin)
            await process.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.close()

    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.gather(feed(), process.wait()), timeout=timeout_seconds)
        except asyncio.TimeoutError:
            timed_out = True
            signal_group(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), _TERM_GRACE_SECONDS)
            except asyncio.TimeoutError:
                pass
        done, _ = await asyncio.wait({out_task, err_task}, timeout=_EOF_GRACE_SECONDS)
        # Whatever is left of the group (children holding the pipes) ends here.
        signal_group(process.pid, signal.SIGKILL)
        if process.returncode is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), 5.0)
        await asyncio.wait({out_task, err_task}, timeout=_EOF_GRACE_SECONDS)
    except asyncio.CancelledError:
        signal_group(process.pid, signal.SIGKILL)
        raise
    finally:
        for task in (out_task, err_task):
            if not task.done():
                task.cancel()
    stdout, size = out_task.result() if out_task.done() and not out_task.cancelled() else (b"", 0)
    return EntrypointOutcome(
        exit_code=process.returncode,
        stdout=stdout[:max_output_bytes],
        stdout_size_bytes=size,
        stdout_truncated=size > max_output_bytes,
        stderr_tail=tail.decode("utf-8", "replace"),
        timed_out=timed_out,
        start_error=None,
        duration_seconds=time.monotonic() - started,
    )
