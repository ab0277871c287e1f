"""The embedded local model: llama.cpp's OpenAI-compatible server, a child process on localhost."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from toolgate.model.local_assets import (
    MODEL_NAME,
    MODEL_TITLE,
    LocalModelError,
    ProgressFn,
    default_cache_dir,
    ensure_model_file,
    local_runtime_available,
)
from toolgate.runner.process import end_process_group

__all__ = ["LocalModelError", "LocalModelServer", "exit_report_for"]

HOST = "127.0.0.1"
# Enough for the system prompt, the tool descriptions and a few rounds of file contents.
DEFAULT_N_CTX = 8192
# Loading takes about 2 s from a warm disk; a cold disk or a busy machine can take much longer.
DEFAULT_STARTUP_TIMEOUT = 120.0
# Seconds the server gets between SIGTERM and SIGKILL.
STOP_GRACE_SECONDS = 5.0
# Set to "off" to let the embedded model write freely instead of through the tool grammar.
GRAMMAR_ENV = "TOOLGATE_LOCAL_GRAMMAR"
# How long a failed request waits for a dying server to be reaped before blaming the transport.
EXIT_WAIT_SECONDS = 3.0
REINSTALL_HINT = "reinstall with toolgate model install"
# Log files kept in the cache folder, newest first; older ones are removed on start.
KEEP_LOGS = 5
_BIND_ATTEMPTS = 3
_POLL_SECONDS = 0.2

# Run llama_cpp.server under a watchdog thread that ends the server when its parent is gone, so a
# parent killed with SIGKILL (no atexit) does not leave a 1 GB process behind.
_BOOTSTRAP = """\
import os, runpy, sys, threading, time
_parent = int(sys.argv.pop(1))
def _watch():
    while os.getppid() == _parent:
        time.sleep(1.0)
    os._exit(0)
threading.Thread(target=_watch, daemon=True).start()
sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""

# uvicorn.run in llama_cpp.server reads HOST and PORT from the environment over its arguments, and
# CONFIG_FILE replaces the arguments altogether; the person's shell must not redirect our server.
_SCRUBBED_ENV = ("HOST", "PORT", "CONFIG_FILE")

_live: weakref.WeakSet[LocalModelServer] = weakref.WeakSet()


class LocalModelServer:
    """The embedded model served over the OpenAI API on 127.0.0.1, started and stopped with us."""

    def __init__(
        self,
        *,
        chat_format: str | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        model_path: Path | None = None,
        cache_dir: Path | None = None,
        log_dir: Path | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        progress: ProgressFn | None = None,
        extra_args: Sequence[str] = (),
        constrained: bool | None = None,
    ) -> None:
        """Configure the server; nothing runs until start().

        chat_format: a llama_cpp chat format such as "chatml-function-calling"; None uses the
        template stored in the GGUF. n_threads: threads for generation and prompt processing;
        None uses half the cores (see default_threads). model_path: a GGUF to serve instead of
        the assembled default model.
        cache_dir: where the model is assembled; log_dir: where the server's output goes
        (default ~/.cache/toolgate/logs). constrained: whether text-mode answers go through
        the tool grammar (local_grammar); None reads TOOLGATE_LOCAL_GRAMMAR (default on).
        """
        self.chat_format = chat_format
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.model_path = model_path
        self.cache_dir = cache_dir or default_cache_dir()
        self.log_dir = log_dir or default_cache_dir().parent / "logs"
        self.startup_timeout = startup_timeout
        self.progress = progress
        self.extra_args = tuple(extra_args)
        if constrained is None:
            constrained = os.environ.get(GRAMMAR_ENV, "on").strip().lower() not in ("off", "0")
        self.constrained = constrained
        self.port: int | None = None
        self.log_path: Path | None = None
        self.startup_seconds: float | None = None
        self._started_at = 0.0
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = False

    # --- what a client needs -------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. http://127.0.0.1:PORT/v1."""
        if self.port is None:
            raise LocalModelError("The local model server has not been started.")
        return f"http://{HOST}:{self.port}/v1"

    @property
    def model(self) -> str:
        """The model name to send in requests."""
        return MODEL_NAME

    @property
    def api_key(self) -> str:
        """A placeholder key: the server checks none, but OpenAI clients insist on one."""
        return "local"

    @property
    def description(self) -> str:
        """One plain line saying which model this is and that it is small."""
        where = f"{HOST}:{self.port}" if self.port is not None else HOST
        return (
            f"Using the embedded local model {MODEL_TITLE} on {where} — a small model: fine for a "
            "demo, weak on real tasks."
        )

    @property
    def pid(self) -> int | None:
        """The server process id while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    def exit_report(self) -> str | None:
        """One line saying how the server ended on its own, or None while it runs.

        None too before start and after stop(): only an exit nobody asked for is reported.
        """
        process = self._process
        if process is None or self._stopping:
            return None
        code = process.poll()
        if code is None:
            return None
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = "an unknown signal"
            how = f"signal {-code} ({name})"
        else:
            how = f"exit code {code}"
        return f"the local model server exited with {how} — log: {self.log_path}; {REINSTALL_HINT}"

    def tool_grammar(self, tools: list[dict[str, Any]]) -> str:
        """The grammar that lets this model answer in prose or one well-formed tool block."""
        from toolgate.model.local_grammar import tool_grammar

        return tool_grammar(tools)

    # --- lifecycle ------------------------------------------------------------------------

    def start_sync(self) -> None:
        """Start the server and block until it answers GET /v1/models."""
        if self.running:
            return
        model_path = self._prepare()
        try:
            self._launch_sync(model_path)
        except BaseException:
            # Ctrl-C or an error while waiting must not leave a half-started server behind.
            self.stop_sync()
            raise

    def _launch_sync(self, model_path: Path) -> None:
        """Spawn the server and wait until it answers, retrying when its port was taken."""
        for attempt in range(1, _BIND_ATTEMPTS + 1):
            self._spawn(model_path)
            deadline = time.monotonic() + self.startup_timeout
            while True:
                state = self._check_ready()
                if state == "ready":
                    self._mark_ready()
                    return
                if state == "exited":
                    break
                if time.monotonic() > deadline:
                    self._fail_timeout()
                time.sleep(_POLL_SECONDS)
            self._after_early_exit(attempt)

    async def start(self) -> None:
        """Start the server without blocking the event loop; returns once it answers."""
        if self.running:
            return
        model_path = await asyncio.to_thread(self._prepare)
        try:
            await self._launch(model_path)
        except BaseException:
            # A cancelled or failed start must not leave a half-started server behind.
            self.stop_sync()
            raise

    async def _launch(self, model_path: Path) -> None:
        """Spawn the server and wait until it answers, without blocking the event loop."""
        for attempt in range(1, _BIND_ATTEMPTS + 1):
            await asyncio.to_thread(self._spawn, model_path)
            deadline = time.monotonic() + self.startup_timeout
            while True:
                state = await asyncio.to_thread(self._check_ready)
                if state == "ready":
                    self._mark_ready()
                    return
                if state == "exited":
                    break
                if time.monotonic() > deadline:
                    await asyncio.to_thread(self._fail_timeout)
                await asyncio.sleep(_POLL_SECONDS)
            self._after_early_exit(attempt)

    def stop_sync(self) -> None:
        """End the server and everything it started; safe to call twice."""
        self._stopping = True
        try:
            process, self._process = self._process, None
            _live.discard(self)
            if process is None:
                return
            end_process_group(process, grace=STOP_GRACE_SECONDS)
        finally:
            self._stopping = False

    async def stop(self) -> None:
        """End the server without blocking the event loop."""
        await asyncio.to_thread(self.stop_sync)

    def __enter__(self) -> LocalModelServer:
        self.start_sync()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop_sync()

    async def __aenter__(self) -> LocalModelServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def log_tail(self, lines: int = 30) -> str:
        """The last lines the server printed, for error messages."""
        if self.log_path is None or not self.log_path.is_file():
            return "(no log)"
        with self.log_path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16384))
            text = f.read().decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    # --- internals ------------------------------------------------------------------------

    def _prepare(self) -> Path:
        """Check the runtime is installed and the model file is ready; return its path."""
        if self.model_path is None:
            missing = local_runtime_available()
            if missing is not None:
                raise LocalModelError(missing)
            return ensure_model_file(self.cache_dir, progress=self.progress)
        if not self.model_path.is_file():
            raise LocalModelError(f"No model file at {self.model_path}.")
        return self.model_path

    def _argv(self, model_path: Path, port: int) -> list[str]:
        """The command that runs llama_cpp.server for this configuration."""
        argv = [
            sys.executable,
            "-c",
            _BOOTSTRAP,
            str(os.getpid()),
            "--model",
            str(model_path),
            "--model_alias",
            MODEL_NAME,
            "--host",
            HOST,
            "--port",
            str(port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads),
            # llama_cpp.server keeps the logits of every prompt token by default, for logprobs
            # Toolgate never asks for: an n_ctx x vocabulary array (5 GB at 8192 tokens) that
            # fills as prompts grow, and the output layer run on each prompt token
            # (docs/LOCAL_MODEL.md, "Memory and long prompts").
            "--logits_all",
            "false",
        ]
        if self.chat_format:
            argv += ["--chat_format", self.chat_format]
        return argv + list(self.extra_args)

    def _spawn(self, model_path: Path) -> None:
        """Start the server process on a free port, its output going to a fresh log file."""
        self.port = _free_port()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        _prune_logs(self.log_dir)
        self.log_path = (
            self.log_dir / f"local-model-{time.strftime('%Y%m%d-%H%M%S')}-{self.port}.log"
        )
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
        self._started_at = time.monotonic()
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                self._argv(model_path, self.port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                # Its own process group, so stop() ends it and anything it started, and a Ctrl-C
                # in our terminal reaches us first instead of killing the server mid-answer.
                start_new_session=(os.name == "posix"),
                creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
            )
        _live.add(self)

    def _check_ready(self) -> str:
        """'ready', 'exited' or 'waiting': whether GET /v1/models answers yet."""
        if self._process is None or self._process.poll() is not None:
            return "exited"
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2.0) as reply:
                return "ready" if reply.status == 200 else "waiting"
        except (OSError, urllib.error.URLError):
            return "waiting"

    def _mark_ready(self) -> None:
        """Remember how long the start took."""
        self.startup_seconds = time.monotonic() - self._started_at

    def _after_early_exit(self, attempt: int) -> None:
        """Retry when another process took our port first; otherwise fail with the log."""
        code = self._process.returncode if self._process is not None else None
        self._process = None
        _live.discard(self)
        tail = self.log_tail()
        if "address already in use" in tail.lower() and attempt < _BIND_ATTEMPTS:
            return
        raise LocalModelError(
            f"The local model server exited during start (exit code {code}). "
            f"Log {self.log_path}:\n{tail}"
        )

    def _fail_timeout(self) -> None:
        """Stop the server that did not answer in time and raise with its log."""
        tail = self.log_tail()
        self.stop_sync()
        raise LocalModelError(
            f"The local model server did not answer on {HOST}:{self.port} within "
            f"{self.startup_timeout:.0f} s. Log {self.log_path}:\n{tail}"
        )


async def exit_report_for(base_url: str, wait: float = EXIT_WAIT_SECONDS) -> str | None:
    """If base_url is an embedded server of ours that has ended, one line saying how.

    A request cut off by the server's death can fail a moment before the process is reaped, so
    this waits up to `wait` seconds for a server that is going; a server that keeps running after
    that is not to blame, and the answer is None.
    """
    server = next((s for s in list(_live) if s.port is not None and s.base_url == base_url), None)
    if server is None:
        return None
    deadline = time.monotonic() + wait
    while True:
        report = server.exit_report()
        if report is not None or time.monotonic() >= deadline:
            return report
        await asyncio.sleep(_POLL_SECONDS)


def default_threads() -> int:
    """Half the cores, at least one.

    llama.cpp's threads spin while they wait for each other, so on a busy 2-core machine two
    threads ran 4-8 times slower than one (docs/LOCAL_MODEL.md).
    """
    return max(1, (os.cpu_count() or 2) // 2)


def _free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _prune_logs(folder: Path) -> None:
    """Keep only the newest log files of the local model server."""
    logs = sorted(folder.glob("local-model-*.log"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in logs[KEEP_LOGS - 1 :]:
        with contextlib.suppress(OSError):
            old.unlink()


@atexit.register
def _stop_all() -> None:
    """Stop every server still running when the interpreter exits."""
    for server in list(_live):
        server.stop_sync()
