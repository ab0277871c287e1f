"""Running one command without a shell, in its own process group, with a timeout and a cap."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolgate.runner.output import OutputCapture
from toolgate.runner.sandbox import SandboxSettings, SandboxUnavailable, sandbox_command

# Seconds a process group gets between SIGTERM and SIGKILL.
TERM_GRACE_SECONDS = 2.0

# Seconds to wait for the output pipe to close once the command itself has exited; longer means
# a leftover child still holds the pipe, and the group is ended.
EOF_GRACE_SECONDS = 1.0

_READ_CHUNK = 65536
_POLL_SECONDS = 0.05

# Environment variables that hold secrets of the person running Toolgate; the workspace's code
# (its tests, its conftest) has no business reading them.
SECRET_ENV_NAMES = frozenset({"OPENAI_API_KEY", "TOOLGATE_API_KEY"})

_PYTHON_NAMES = ("python", "python3")
_PYTEST_NAMES = ("pytest", "py.test")


@dataclass
class ProcessOutcome:
    """How a command ended and what it printed (stdout and stderr interleaved, capped)."""

    argv: list[str]
    exit_code: int | None
    output: str
    output_truncated: bool
    output_size_bytes: int
    timed_out: bool
    duration_seconds: float
    sandboxed: bool = False  # ran inside the OS sandbox (toolgate.runner.sandbox)
    sandbox_note: str | None = None  # why it ran without one, said once per process


def _venv_bins(cwd: Path, root: Path | None) -> list[Path]:
    """The bin folders of virtual environments in cwd and its parents up to root."""
    folders = [cwd]
    if root is not None:
        real_root = root.resolve()
        here = cwd.resolve()
        folders = []
        while True:
            folders.append(here)
            if here == real_root or here.parent == here:
                break
            here = here.parent
        if real_root not in folders:
            folders = [cwd]
    bins: list[Path] = []
    for folder in folders:
        for venv in (".venv", "venv"):
            for sub in ("bin", "Scripts"):
                candidate = folder / venv / sub
                if candidate.is_dir():
                    bins.append(candidate)
    return bins


def _executable_in(folder: Path, name: str) -> Path | None:
    for candidate in (folder / name, folder / f"{name}.exe"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def resolve_executable(argv: list[str], cwd: Path, *, root: Path | None = None) -> list[str]:
    """Resolve 'python', 'python3' and 'pytest' to the workspace's venv, else PATH, else ourselves.

    The workspace's own `.venv/bin` (or `venv/bin`) in `cwd` — or any folder between `cwd` and
    `root` when `root` is given — comes first; then PATH; then the interpreter running Toolgate
    (`pytest` becomes `[sys.executable, "-m", "pytest"]`). Other commands are left as they are.
    """
    if not argv:
        return list(argv)
    name, rest = argv[0], list(argv[1:])
    if name not in _PYTHON_NAMES + _PYTEST_NAMES:
        return list(argv)
    for folder in _venv_bins(cwd, root):
        found = _executable_in(folder, name)
        if found is None and name in _PYTHON_NAMES:
            found = _executable_in(folder, "python") or _executable_in(folder, "python3")
        if found is not None:
            return [str(found), *rest]
        if name in _PYTEST_NAMES:
            python = _executable_in(folder, "python") or _executable_in(folder, "python3")
            if python is not None:
                return [str(python), "-m", "pytest", *rest]
    on_path = shutil.which(name)
    if on_path is not None:
        return [on_path, *rest]
    if name in _PYTEST_NAMES:
        return [sys.executable, "-m", "pytest", *rest]
    return [sys.executable, *rest]


def child_environment(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a command: ours plus `overrides`, without the person's secrets.

    Secrets are dropped after merging, so a caller passing a copy of `os.environ` as
    `overrides` does not hand them back.
    """
    env = dict(os.environ)
    if overrides:
        env.update(overrides)
    for name in SECRET_ENV_NAMES:
        env.pop(name, None)
    return env


def _find_program(name: str, cwd: Path, env: Mapping[str, str]) -> str | None:
    """Where `name` would be executed from, as execvp finds it; None when nowhere."""
    if os.sep in name:
        path = name if os.path.isabs(name) else os.path.join(cwd, name)
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return shutil.which(name, path=env.get("PATH", os.defpath))


def signal_group(pgid: int, signum: int) -> None:
    """Send `signum` to a process group; a group already gone (or not ours) is left be."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def end_process_group(
    process: subprocess.Popen[bytes], *, grace: float = TERM_GRACE_SECONDS
) -> None:
    """Stop a process started in its own group: SIGTERM, SIGKILL after `grace`, then reap it.

    The blocking twin of what `run_process` does on a timeout, for long-lived servers.
    """
    if os.name != "posix":
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        return
    signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(grace)
    # The group may hold children that outlive the leader; SIGKILL whatever is left.
    signal_group(process.pid, signal.SIGKILL)
    process.wait()


async def _wait_exit(process: asyncio.subprocess.Process, seconds: float) -> None:
    """Wait until the command itself has exited, at most `seconds`.

    `returncode` is polled rather than awaiting `process.wait()`, which (before Python 3.12)
    also waits for the output pipe to close — a pipe a leftover child may hold forever.
    """
    deadline = time.monotonic() + seconds
    while process.returncode is None and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(_POLL_SECONDS)


async def _end_group(process: asyncio.subprocess.Process, *, grace: float) -> None:
    """Ask the whole process group to stop, force it after `grace` seconds, and reap the leader."""
    pgid = process.pid
    if grace > 0:
        signal_group(pgid, signal.SIGTERM)
        await _wait_exit(process, grace)
    # The leader may have gone on SIGTERM while its children ignored it: force them all.
    signal_group(pgid, signal.SIGKILL)
    await _wait_exit(process, 5.0)


async def _pump(stream: asyncio.StreamReader, capture: OutputCapture) -> None:
    while True:
        chunk = await stream.read(_READ_CHUNK)
        if not chunk:
            return
        capture.feed(chunk)


def _is_dir(path: Path) -> bool:
    # One stat call: cheaper than handing it to a thread.
    return os.path.isdir(path)


class StartError(Exception):
    """A program that could not start; the message says why in words the model reads."""


async def start_process(
    argv: Sequence[str],
    cwd: Path,
    *,
    shown: Sequence[str],
    stdin: int,
    stderr: int,
    env: Mapping[str, str] | None = None,
    what: str = "command",
) -> asyncio.subprocess.Process:
    """Start argv in cwd in a new process group, stdout piped, without the person's secrets.

    `shown` is the command as the person wrote it (argv may wrap it in a sandbox); `what` names
    it in the message of a StartError, raised when the program cannot start.
    """
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            stdin=stdin,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
            env=child_environment(env),
        )
    except FileNotFoundError:
        raise StartError(f"command not found: {shown[0]!r} is not an executable on PATH") from None
    except PermissionError:
        raise StartError(f"permission denied: {shown[0]!r} cannot be executed") from None
    except OSError as error:
        raise StartError(f"the {what} could not start: {error}") from None


def _failed_start(argv: list[str], message: str, started: float) -> ProcessOutcome:
    return ProcessOutcome(
        argv=list(argv),
        exit_code=None,
        output=message,
        output_truncated=False,
        output_size_bytes=len(message.encode()),
        timed_out=False,
        duration_seconds=time.monotonic() - started,
    )


@dataclass(frozen=True)
class _Launch:
    """The argv that is started, and whether (and if not, why not) it runs in the sandbox."""

    argv: list[str]
    sandboxed: bool = False
    note: str | None = None


async def _sandboxed_launch(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str] | None,
    sandbox: SandboxSettings,
    root: Path | None,
    writable: Sequence[Path],
) -> _Launch | str:
    """The command wrapped in the OS sandbox, or the reason it cannot start."""
    # Inside bwrap a missing program is bwrap's own error: tell it as for any command.
    if _find_program(argv[0], cwd, child_environment(env)) is None:
        return f"command not found: {argv[0]!r} is not an executable on PATH"
    try:
        wrapped = await asyncio.to_thread(
            sandbox_command,
            argv,
            settings=sandbox,
            root=root if root is not None else cwd,
            cwd=cwd,
            writable=writable,
        )
    except SandboxUnavailable as error:
        return str(error)
    return _Launch(wrapped.argv, wrapped.active, wrapped.note)


async def _capture_until_done(
    process: asyncio.subprocess.Process, capture: OutputCapture, *, deadline: float
) -> bool:
    """Read the command's output into `capture` until it is done; True when it timed out.

    On timeout or cancellation the whole process group is ended before this returns or raises.
    """
    assert process.stdout is not None
    pump = asyncio.ensure_future(_pump(process.stdout, capture))
    try:
        timed_out = await _watch(process, pump, deadline)
        await asyncio.wait({pump}, timeout=EOF_GRACE_SECONDS)
        await _wait_exit(process, EOF_GRACE_SECONDS)
    except asyncio.CancelledError:
        await _end_group(process, grace=0)
        raise
    finally:
        if not pump.done():
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
    return timed_out


async def _watch(
    process: asyncio.subprocess.Process, pump: asyncio.Future[None], deadline: float
) -> bool:
    """Wait until the command has exited and its output has ended; True when it timed out.

    Polled, so that an exit is noticed even while a leftover child keeps the pipe open.
    """
    exited_at: float | None = None
    while True:
        now = time.monotonic()
        exited = process.returncode is not None
        if exited and pump.done():
            return False
        if now >= deadline:
            await _end_group(process, grace=TERM_GRACE_SECONDS)
            return True
        if exited:
            exited_at = exited_at if exited_at is not None else now
            if now - exited_at >= EOF_GRACE_SECONDS:
                # The command is gone; what holds the pipe is a child it left behind.
                signal_group(process.pid, signal.SIGKILL)
                return False
        step = min(_POLL_SECONDS, deadline - now)
        if pump.done():
            await asyncio.sleep(step)
        else:
            await asyncio.wait({pump}, timeout=step)


async def run_process(
    argv: list[str],
    cwd: Path,
    *,
    timeout_seconds: float,
    max_output_bytes: int,
    env: Mapping[str, str] | None = None,
    sandbox: SandboxSettings | None = None,
    root: Path | None = None,
    writable: Sequence[Path] = (),
) -> ProcessOutcome:
    """Run argv (never through a shell) in cwd and return how it ended.

    The command gets a new session and process group, stdin from /dev/null, and the environment
    of Toolgate updated with `env` (variables to set, not a whole environment), minus the
    person's secrets (`SECRET_ENV_NAMES`). On timeout or cancellation the whole group is
    ended (SIGTERM, a short grace, SIGKILL) and reaped. Output is capped while it is read. A
    command that cannot start is an outcome with `exit_code=None` and the reason as output.

    With `sandbox`, the command runs inside the OS sandbox (`toolgate.runner.sandbox`) where
    only `root` (the workspace, default `cwd`) and `writable` can be written; when the sandbox
    is required and unavailable, the command does not start and the outcome says why.
    """
    started = time.monotonic()
    argv = [str(arg) for arg in argv]
    if not argv:
        return _failed_start(argv, "cannot run an empty command", started)
    if not _is_dir(cwd):
        return _failed_start(argv, f"working directory does not exist: {cwd}", started)
    shown = argv
    launch = _Launch(argv)
    if sandbox is not None:
        prepared = await _sandboxed_launch(argv, cwd, env, sandbox, root, writable)
        if isinstance(prepared, str):
            return _failed_start(argv, prepared, started)
        launch = prepared
    try:
        process = await start_process(
            launch.argv,
            cwd,
            shown=shown,
            stdin=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
        )
    except StartError as error:
        return _failed_start(shown, str(error), started)

    capture = OutputCapture(max_output_bytes)
    timed_out = await _capture_until_done(process, capture, deadline=started + timeout_seconds)
    output = capture.text()
    if timed_out:
        output += (
            f"\n[timed out after {timeout_seconds:g} s; the command and its children were ended]"
        )
    return ProcessOutcome(
        argv=shown,
        exit_code=None if timed_out else process.returncode,
        output=output,
        output_truncated=capture.truncated,
        output_size_bytes=capture.total,
        timed_out=timed_out,
        duration_seconds=time.monotonic() - started,
        sandboxed=launch.sandboxed,
        sandbox_note=launch.note,
    )
