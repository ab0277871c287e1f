"""The OS sandbox for test runs and commands: bubblewrap (`bwrap`), where the system has it.

Inside, the whole filesystem is read-only except the workspace (whose `.git/` and `.toolgate/`
stay read-only) and a private `/tmp`; the network is gone unless the configuration allows it;
the command gets new PID, IPC and UTS namespaces and no capabilities, and dies with the run.
Where bwrap is missing or cannot create namespaces, commands run as before and the person is
told once; `mode = "required"` refuses to run them instead.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MODES = ("auto", "required", "off")

# Inside the workspace, folders a command under test must not change: git's own files (a hook
# written there would run outside the sandbox at the next commit) and Toolgate's records.
READ_ONLY_IN_WORKSPACE = (".git", ".toolgate")

# The person's secrets in their home folder, hidden inside the sandbox: tests have no reason
# to read them, and a test could copy them into the workspace for the model to read.
HIDDEN_IN_HOME = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".pypirc",
    ".git-credentials",
    ".config/gcloud",
    ".config/gh",
    ".config/toolgate",
    ".local/state/toolgate",
)

_PROBE_TIMEOUT_SECONDS = 15.0

log = logging.getLogger("toolgate.sandbox")


class SandboxUnavailable(Exception):
    """The configuration requires the sandbox and this machine cannot provide it."""


@dataclass(frozen=True)
class SandboxSettings:
    """Whether commands run inside the sandbox, and whether they may use the network."""

    mode: str = "auto"  # "auto": when bwrap works; "required": never without it; "off"
    network: bool = False


@dataclass(frozen=True)
class Sandboxed:
    """The argv to run and how: inside bwrap, or not (with the reason, told once)."""

    argv: list[str]
    active: bool
    note: str | None = None  # set on the first command that runs without the sandbox


_lock = threading.Lock()
_problem: dict[str, str | None] = {}
_told = False


def bwrap_argv(
    argv: Sequence[str],
    *,
    root: Path,
    cwd: Path,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    network: bool = False,
    bwrap: str = "bwrap",
) -> list[str]:
    """The bwrap command line running `argv` in `cwd`, only `root` and `writable` writable.

    `readable` names folders under `/tmp` or `/var/tmp` the command needs to read, which the
    private temporary folders would otherwise hide (see `hidden_by_private_tmp`).
    """
    real_root = os.path.realpath(root)
    args = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/var/tmp",
        "--bind",
        real_root,
        real_root,
    ]
    for folder in readable:
        real = os.path.realpath(folder)
        args += ["--ro-bind", real, real]
    for name in READ_ONLY_IN_WORKSPACE:
        inside = os.path.join(real_root, name)
        if os.path.isdir(inside) and not os.path.islink(inside):
            args += ["--ro-bind", inside, inside]
    for folder in writable:
        real = os.path.realpath(folder)
        args += ["--bind", real, real]
    home = os.path.expanduser("~")
    for name in HIDDEN_IN_HOME:
        secret = os.path.join(home, name)
        if _contains(secret, real_root) or not os.path.lexists(secret):
            continue
        if os.path.isdir(secret) and not os.path.islink(secret):
            args += ["--tmpfs", secret]
        elif os.path.isfile(secret):
            args += ["--ro-bind", "/dev/null", secret]
    args += [
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--setenv",
        "TMPDIR",
        "/tmp",
        "--chdir",
        os.path.realpath(cwd),
    ]
    if not network:
        args.append("--unshare-net")
    return [*args, "--", *argv]


def hidden_by_private_tmp(argv: Sequence[str], root: Path) -> list[Path]:
    """What the command reads from `/tmp` or `/var/tmp`, which the sandbox empties.

    A virtual environment or a checkout of Toolgate can live there (a fresh clone in `/tmp`):
    the command's interpreter environment, this interpreter's, and Toolgate's own files (its
    pytest plugin) are bound back read-only, and so are the `PYTHONPATH` entries the command
    inherits. Folders inside the workspace are visible already.
    """
    candidates = [Path(sys.prefix), Path(__file__).resolve().parent.parent]
    candidates += [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if argv:
        exe = Path(shutil.which(argv[0]) or argv[0])
        for path in (exe, exe.resolve()):
            if path.parent.name == "bin":  # <env>/bin/python: the environment is <env>
                candidates.append(path.parent.parent)
    temporary = [os.path.realpath(t) for t in ("/tmp", "/var/tmp")]
    real_root = os.path.realpath(root)
    found: list[Path] = []
    for candidate in candidates:
        real = os.path.realpath(candidate)
        if (
            os.path.isdir(real)
            and any(_contains(t, real) for t in temporary)
            and not _contains(real_root, real)
            and Path(real) not in found
        ):
            found.append(Path(real))
    return found


def _contains(path: str, folder: str) -> bool:
    """Whether `folder` lies inside `path` (hiding `path` would hide the workspace)."""
    try:
        return os.path.commonpath([path, folder]) == path
    except ValueError:
        return False


def bwrap_problem(bwrap: str | None = None) -> str | None:
    """Why commands cannot run inside bwrap here, or None when they can. Checked once."""
    name = bwrap or "bwrap"
    with _lock:
        if name in _problem:
            return _problem[name]
        _problem[name] = problem = _probe(name)
        return problem


def _probe(name: str) -> str | None:
    found = shutil.which(name)
    if found is None:
        return "bubblewrap (bwrap) is not installed"
    probe_root = Path(os.path.realpath("/tmp"))
    try:
        done = subprocess.run(
            bwrap_argv(["true"], root=probe_root, cwd=probe_root, bwrap=found),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap could not start: {error}"
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        return "bubblewrap cannot create its namespaces here" + (
            f" ({reason[-1]})" if reason else f" (exit status {done.returncode})"
        )
    return None


def sandbox_command(
    argv: Sequence[str],
    *,
    settings: SandboxSettings,
    root: Path,
    cwd: Path,
    writable: Sequence[Path] = (),
) -> Sandboxed:
    """Wrap argv in the sandbox the settings ask for, or say why it runs without one.

    Raises SandboxUnavailable when the settings require the sandbox and bwrap cannot give it.
    """
    global _told
    if settings.mode == "off":
        return Sandboxed(list(argv), active=False)
    problem = bwrap_problem()
    if problem is None:
        wrapped = bwrap_argv(
            argv,
            root=root,
            cwd=cwd,
            writable=writable,
            readable=hidden_by_private_tmp(argv, root),
            network=settings.network,
            bwrap=shutil.which("bwrap") or "bwrap",
        )
        return Sandboxed(wrapped, active=True)
    if settings.mode == "required":
        raise SandboxUnavailable(
            f"refused: the configuration requires an OS sandbox for tests and commands "
            f'(sandbox.mode = "required"), and {problem}. Install bubblewrap, or ask the person '
            "to change the setting."
        )
    note = None
    with _lock:
        if not _told:
            _told = True
            note = (
                f"tests and commands run without an OS sandbox: {problem} "
                "(install bubblewrap to confine them to the workspace)"
            )
            log.warning(note)
    return Sandboxed(list(argv), active=False, note=note)


def forget_probe() -> None:
    """Check bwrap again at the next command, and tell again (tests)."""
    global _told
    with _lock:
        _problem.clear()
        _told = False
