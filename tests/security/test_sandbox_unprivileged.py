"""The sandbox as most people run it: as an unprivileged user, not as root.

bubblewrap without setuid needs user namespaces open to unprivileged users. Under root the
test switches to `nobody` (setpriv) and runs a real sandboxed test run through Toolgate's
test runner; as any other user it runs as that user. Where the kernel or its policy keeps
user namespaces from unprivileged users, the test is skipped and says so.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import toolgate

# Run as the unprivileged user: one sandboxed (or not) test run, its data as JSON.
DRIVER = """
import asyncio, json, sys
from pathlib import Path
from toolgate.runner.sandbox import SandboxSettings, bwrap_problem
from toolgate.testing.runner import run_pytest

root, mode = Path(sys.argv[1]), sys.argv[2]
problem = bwrap_problem() if mode != "off" else None
run = None
if problem is None:
    run = asyncio.run(run_pytest(
        root, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        timeout_seconds=120, sandbox=SandboxSettings(mode=mode),
    )).to_data()
print(json.dumps({"problem": problem, "run": run}))
"""

# The workspace's test: what it may do, and what it tries, written down for the host to read.
PROBE_TEST = """
import json, os, socket

def test_probe():
    facts = {{"uid": os.getuid(), "pid": os.getpid()}}
    try:
        with open({outside!r}, "w") as handle:
            handle.write("escaped")
        facts["outside"] = "written"
    except OSError as error:
        facts["outside"] = type(error).__name__
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
        facts["network"] = "connected"
    except OSError as error:
        facts["network"] = type(error).__name__
    with open("facts.json", "w") as handle:
        json.dump(facts, handle)
"""


@dataclass
class Unprivileged:
    """How to run Python as an unprivileged user: the argv prefix, the uid, the environment."""

    prefix: list[str]
    uid: int
    python: str
    env: dict[str, str] = field(default_factory=dict)


def _unprivileged() -> Unprivileged:
    """Ourselves when we are not root; else `nobody` through setpriv, with a Python it can run."""
    if os.geteuid() != 0:
        return Unprivileged([], os.geteuid(), sys.executable)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv (util-linux): cannot become unprivileged")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("running as root and there is no user 'nobody' to become")
    prefix = [setpriv, f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    if _open_to_others(Path(sys.executable).resolve()):
        return Unprivileged(prefix, nobody.pw_uid, sys.executable)
    # This interpreter lives where others cannot go (a root-only pyenv): the system's own
    # Python of the same version runs this environment's packages and Toolgate's source.
    system = shutil.which(
        f"python{sys.version_info.major}.{sys.version_info.minor}", path="/usr/bin"
    )
    if system is None or not _open_to_others(Path(system).resolve()):
        pytest.skip(f"{sys.executable} is not reachable by others and no system Python matches it")
    source = Path(toolgate.__file__).resolve().parents[1]
    packages = sysconfig.get_paths()["purelib"]
    for folder in (source, Path(packages)):
        if not _open_to_others(folder):
            pytest.skip(f"{folder} is not readable by others")
    return Unprivileged(
        prefix, nobody.pw_uid, system, {"PYTHONPATH": f"{source}{os.pathsep}{packages}"}
    )


def _open_to_others(path: Path) -> bool:
    """Whether others may reach `path`: every folder above it lets them through."""
    return all(folder.stat().st_mode & 0o001 for folder in path.parents) and bool(
        path.stat().st_mode & 0o005
    )


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder under /tmp the unprivileged user owns (pytest's own are root's, mode 700)."""
    folder = Path(tempfile.mkdtemp(prefix="toolgate-unprivileged-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _test_run(place: Path, port: int, mode: str) -> tuple[dict[str, object], Path]:
    """One test run as the unprivileged user in a fresh workspace: its data, the outside file."""
    user = _unprivileged()
    workspace, outside, home = place / mode, place / f"outside-{mode}", place / "home"
    for folder in (workspace, outside, home):
        folder.mkdir(exist_ok=True)
    escaped = outside / "escaped.txt"
    (workspace / "test_probe.py").write_text(PROBE_TEST.format(outside=str(escaped), port=port))
    for path in [place, *place.rglob("*")]:
        os.chown(path, user.uid, -1)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        **user.env,
    }
    done = subprocess.run(
        [*user.prefix, user.python, "-c", DRIVER, str(workspace), mode],
        cwd=place,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    if answer["problem"] is not None:
        pytest.skip(f"bubblewrap does not work for an unprivileged user here: {answer['problem']}")
    facts = json.loads((workspace / "facts.json").read_text())
    assert facts["uid"] == user.uid, "the test run was not unprivileged"
    return {**facts, "run": answer["run"]}, escaped


def test_an_unprivileged_user_gets_the_sandbox(place: Path, listener: int) -> None:
    facts, escaped = _test_run(place, listener, "required")
    run = facts["run"]
    assert isinstance(run, dict) and run["sandboxed"] is True, run
    assert run["exit_code"] == 0, run["output"]
    assert facts["outside"] != "written" and not escaped.exists()
    assert facts["network"] != "connected"
    assert isinstance(facts["pid"], int) and facts["pid"] < 10  # a PID namespace of its own


def test_without_the_sandbox_the_same_user_writes_outside(place: Path, listener: int) -> None:
    """The control: the same user, unconfined, can write there and connect."""
    facts, escaped = _test_run(place, listener, "off")
    assert facts["outside"] == "written" and escaped.read_text() == "escaped"
    assert facts["network"] == "connected"
