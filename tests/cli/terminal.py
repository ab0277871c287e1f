"""Driving `toolgate` through a pseudo-terminal, as a person at a keyboard does."""

from __future__ import annotations

import codecs
import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time


class Terminal:
    """`python -m toolgate ARGS` on a pseudo-terminal: type into it, wait for text, Ctrl-C."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        """Start the command as the leader of its own session with the pty as its terminal."""
        self.master, slave = pty.openpty()
        full = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", TERM="dumb")
        full.update(env or {})

        def controlling_tty() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
            # As a shell starts a program: Ctrl-C interrupts, whatever the test process set.
            signal.signal(signal.SIGINT, signal.SIG_DFL)

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolgate", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=controlling_tty,  # noqa: PLW1509 — nothing else runs in the test process
            env=full,
        )
        os.close(slave)
        self.seen = ""
        # A character's bytes can arrive in two reads.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def expect(self, text: str, timeout: float = 60) -> str:
        """Read until TEXT has appeared after what earlier calls consumed; return all before it."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} did not appear; the screen so far:\n{self.seen}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the other side closed: the process ended
                    chunk = b""
                if not chunk and self.proc.poll() is not None:
                    raise AssertionError(f"{text!r} never came; the process ended:\n{self.seen}")
                self.seen += self._decoder.decode(chunk)
        before, _, self.seen = self.seen.partition(text)
        return before

    def type(self, text: str) -> None:
        """Type TEXT as keys (a line ends with \\r, as Enter sends)."""
        os.write(self.master, text.encode())

    def interrupt(self) -> None:
        """Press Ctrl-C."""
        os.write(self.master, b"\x03")

    def wait(self, timeout: float = 60) -> int:
        """The exit status, draining the screen meanwhile so the process never blocks on it."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    self.seen += self._decoder.decode(os.read(self.master, 4096))
                except OSError:
                    pass
        return self.proc.wait(timeout=1)

    def close(self) -> None:
        """End the process if it is still running and free the pty."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
