"""Escape attempts through the tools and the test runner, counted, with the disk checked.

Each attempt is one thing a model could try to reach outside the workspace: a path, a symlink,
`.git/`, a NUL byte, a pytest option naming an outside path in any spelling, the environment,
a `cwd`, and writes, sockets and leftover processes from inside a test run, with and without
the OS sandbox. The tally is printed at the end (`pytest tests/security -s`).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.engine.helpers import answer, calls, drive, fast_pytest, results_read, snapshot
from tests.support.scripted_model import ScriptedModel

from toolgate.runner.allowlist import CommandRefused
from toolgate.runner.sandbox import bwrap_problem, forget_probe
from toolgate.testing.options import check_pytest_paths
from toolgate.workspace import PathRefused, Workspace

TALLY: Counter[str] = Counter()

needs_bwrap = pytest.mark.skipif(
    bwrap_problem() is not None, reason=f"no working bubblewrap here: {bwrap_problem()}"
)


def _count(refused: bool) -> None:
    TALLY["tried"] += 1
    TALLY["refused"] += int(refused)


@pytest.fixture(scope="module", autouse=True)
def _print_tally() -> Iterator[None]:
    yield
    print(f"\nescapes tried: {TALLY['tried']}, refused: {TALLY['refused']}")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("not for the model\n")
    return folder


# -- paths through the workspace's own checks -------------------------------------------------


def test_paths_symlinks_git_and_nul_are_refused(repo: Path, outside: Path) -> None:
    (repo / "link").symlink_to(outside)
    (repo / "file_link").symlink_to(outside / "secret.txt")
    (repo / "git_link").symlink_to(repo / ".git")
    workspace = Workspace(repo)
    attempts = [
        "../outside/secret.txt",
        str(outside / "secret.txt"),
        "/etc/passwd",
        "~/.ssh/id_rsa",
        "C:\\Windows\\win.ini",
        "sub/../../outside/secret.txt",
        "link/secret.txt",
        "file_link",
        ".git/config",
        ".GIT/hooks/pre-commit",
        "git_link/config",
        "ok.txt\x00../../etc/passwd",
        "",
    ]
    before = snapshot(repo, outside, skip=())
    for path in attempts:
        for write in (False, True):
            try:
                if write:
                    workspace.write(path, "pwned\n")
                else:
                    workspace.read(path)
            except (PathRefused, FileNotFoundError) as error:
                _count(isinstance(error, PathRefused))
                assert isinstance(error, PathRefused), (path, error)
            else:
                _count(False)
                pytest.fail(f"{path!r} was not refused (write={write})")
    assert snapshot(repo, outside, skip=()) == before


# -- pytest's options, every spelling ---------------------------------------------------------


def _refused(argv: list[str], repo: Path, env: dict[str, str], reason: str, what: str) -> None:
    """A pytest command the options check must refuse, saying `reason`; counted."""
    try:
        check_pytest_paths(argv, head=1, root=repo, cwd=repo, env=env)
    except CommandRefused as error:
        _count(True)
        assert reason in str(error)
    else:
        _count(False)
        pytest.fail(f"{what} was not refused")


SPELLINGS = [
    "--rootdir={o}",
    "--rootdir {o}",
    "--rootdir=..",
    "--root={o}",
    "--rootd {o}",
    "-c {o}/pytest.ini",
    "-c{o}/pytest.ini",
    "-qc {o}/pytest.ini",
    "--config-file={o}/pytest.ini",
    "--config-file {o}/pytest.ini",
    "--confcutdir={o}",
    "--basetemp={o}/tmp",
    "--basetemp ../outside",
    "--junitxml={o}/r.xml",
    "--junit-xml {o}/r.xml",
    "--result-log={o}/r.log",
    "--report-log={o}/r.json",
    "--log-file={o}/log.txt",
    "--debug={o}/debug.log",
    "--cov-report=html:{o}/cov",
    "--cov-report xml:{o}/cov.xml",
    "-o cache_dir={o}/cache",
    "-ocache_dir={o}/cache",
    "-qo cache_dir={o}/cache",
    "--override-ini=cache_dir={o}/cache",
    "--override-ini cache_dir={o}/cache",
    "--override-ini=log_file={o}/x.log",
    "-o addopts=--basetemp={o}/t",
    "-p {o}/evil.py",
    "-p../outside/evil",
    "{o}/test_x.py",
    "../outside",
    "{o}/test_x.py::test_a",
    "-- {o}",
    "link_out",
    "--basetemp=link_out/t",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_pytest_options_naming_outside_paths_are_refused(
    repo: Path, outside: Path, spelling: str
) -> None:
    (repo / "link_out").symlink_to(outside)
    args = shlex.split(spelling.format(o=outside))
    _refused(["pytest", *args], repo, {}, "refused", f"`pytest {spelling}`")


@pytest.mark.parametrize(
    "spelling",
    [
        "-q --tb=short",
        "--rootdir=.",
        "--basetemp=build/tmp",
        "-o cache_dir=.cache",
        "--junitxml reports/r.xml",
        "-k 'a and not b' -m slow -W error::DeprecationWarning",
        "-p no:cacheprovider -p xdist",
        "tests/test_a.py::test_x[a-b]",
        "--cov-report term-missing",
        "-x -vv --maxfail 2 --durations 5",
    ],
)
def test_options_inside_the_workspace_pass(repo: Path, spelling: str) -> None:
    check_pytest_paths(["pytest", *shlex.split(spelling)], head=1, root=repo, cwd=repo, env={})


@pytest.mark.parametrize(
    "env",
    [
        {"PYTEST_ADDOPTS": "--rootdir={o}"},
        {"PYTEST_ADDOPTS": "-q -o cache_dir={o}/c"},
        {"PYTEST_PLUGINS": "ok_plugin,{o}/evil.py"},
    ],
)
def test_environment_naming_outside_paths_is_refused(
    repo: Path, outside: Path, env: dict[str, str]
) -> None:
    filled = {key: value.format(o=outside) for key, value in env.items()}
    _refused(["pytest"], repo, filled, "PYTEST_", str(filled))


async def test_through_a_run_the_model_reads_refusals_and_nothing_is_written(
    repo: Path, outside: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported escapes (`--rootdir`, `-c`), an outside `cwd` and a python module run."""
    fast_pytest(monkeypatch)
    (outside / "pytest.ini").write_text("[pytest]\n")
    (repo / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    attempts = [
        ("run_tests", {"command": f"pytest --rootdir={outside}"}),
        ("run_tests", {"command": f"pytest -c {outside}/pytest.ini"}),
        ("run_tests", {"command": f"python -m pytest --basetemp {outside}/t"}),
        ("run_tests", {"command": "pytest", "cwd": ".."}),
        ("run_tests", {"command": "pytest", "cwd": str(outside)}),
        ("run_command", {"command": f"pytest -o cache_dir={outside}/c"}),
    ]
    scripted.script = [calls(*attempts), answer()]
    before = snapshot(outside, skip=())
    driven = await drive(repo, scripted)
    results = results_read(scripted)
    assert len(results) == len(attempts)
    for (name, args), result in zip(attempts, results, strict=True):
        _count(result["success"] is False)
        assert result["success"] is False, (name, args, result)
        assert "outside" in result["error"] or "not allowed" in result["error"], result
    assert snapshot(outside, skip=()) == before
    assert not (outside / ".pytest_cache").exists()
    assert driven.outcome.status == "completed"


# -- writes, sockets and processes from inside a test run -------------------------------------

_ESCAPING_TEST = """
import os, socket, subprocess, sys, time

OUTSIDE = {outside!r}
PORT = {port}


def test_write_outside():
    with open(os.path.join(OUTSIDE, "written.txt"), "w") as handle:
        handle.write("escaped")


def test_write_home():
    with open(os.path.expanduser("~/.toolgate-escape-probe"), "w") as handle:
        handle.write("escaped")


def test_write_git_hook():
    with open(os.path.join(os.getcwd(), ".git", "hooks", "pre-commit"), "w") as handle:
        handle.write("#!/bin/sh\\necho escaped\\n")


def test_connect():
    socket.create_connection(("127.0.0.1", PORT), timeout=5).close()


def test_read_ssh_key():
    with open(os.path.expanduser("~/.ssh/toolgate_probe_key")) as handle:
        assert "PRIVATE" not in handle.read()


def test_leave_a_process():
    # A daemon in its own session, outliving the test run unless the sandbox ends it.
    subprocess.Popen(
        [sys.executable, "-c",
         "import time; time.sleep(3); open({marker!r}, 'w').write('alive')"],
        start_new_session=True,
    )


def test_inside_is_fine():
    with open("made_inside.txt", "w") as handle:
        handle.write("ok")
"""


@pytest.fixture
def ssh_key() -> Iterator[Path]:
    """A private key in the person's ~/.ssh (created for the test, removed after)."""
    folder = Path(os.path.expanduser("~/.ssh"))
    created = not folder.exists()
    folder.mkdir(mode=0o700, exist_ok=True)
    key = folder / "toolgate_probe_key"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    try:
        yield key
    finally:
        key.unlink()
        if created:
            folder.rmdir()


def _escaping_run_overrides(mode: str) -> dict[str, object]:
    return {"sandbox": {"mode": mode, "network": False}}


@needs_bwrap
async def test_writes_sockets_and_processes_are_stopped_by_the_sandbox(
    repo: Path,
    outside: Path,
    scripted: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    listener: int,
    ssh_key: Path,
) -> None:
    fast_pytest(monkeypatch)
    marker = outside / "daemon_alive.txt"
    probe = Path(os.path.expanduser("~/.toolgate-escape-probe"))
    probe.unlink(missing_ok=True)
    (repo / "test_escape.py").write_text(
        _ESCAPING_TEST.format(outside=str(outside), port=listener, marker=str(marker))
    )
    hook = repo / ".git" / "hooks" / "pre-commit"
    before = snapshot(outside, skip=())
    scripted.script = [calls(("run_tests", {"command": "pytest -q -p no:cacheprovider"})), answer()]
    await drive(repo, scripted, overrides=_escaping_run_overrides("required"))
    (result,) = results_read(scripted)
    assert result["data"]["sandboxed"] is True
    failed = {f["test_id"].rsplit("::", 1)[1] for f in result["data"]["failures"]}
    blocked = {
        "test_write_outside",
        "test_write_home",
        "test_write_git_hook",
        "test_connect",
        "test_read_ssh_key",
    }
    for name in sorted(blocked):
        _count(name in failed)
    assert blocked <= failed, result["data"]["failures"]
    assert "test_inside_is_fine" not in failed
    assert (repo / "made_inside.txt").read_text() == "ok"
    assert not hook.exists() and not probe.exists()
    assert ssh_key.read_text().startswith("-----BEGIN")  # hidden from the tests, not touched
    await asyncio.sleep(5)  # the daemon would have written its marker by now
    _count(not marker.exists())
    assert not marker.exists(), "a process started by the tests outlived the sandboxed run"
    assert snapshot(outside, skip=()) == before


async def test_without_the_sandbox_the_same_run_gets_out(
    repo: Path,
    outside: Path,
    scripted: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    listener: int,
) -> None:
    """What the sandbox is for: with `sandbox = "off"` the test code writes outside."""
    fast_pytest(monkeypatch)
    marker = outside / "daemon_alive.txt"
    (repo / "test_escape.py").write_text(
        _ESCAPING_TEST.format(outside=str(outside), port=listener, marker=str(marker))
    )
    scripted.script = [
        calls(("run_tests", {"command": "pytest -q -p no:cacheprovider -k 'outside or connect'"})),
        answer(),
    ]
    await drive(repo, scripted, overrides=_escaping_run_overrides("off"))
    (result,) = results_read(scripted)
    assert result["data"]["sandboxed"] is False
    assert result["data"]["failures"] == []
    assert (outside / "written.txt").read_text() == "escaped"


async def test_required_sandbox_without_bwrap_refuses(
    repo: Path, outside: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A PATH on which bubblewrap cannot be found, as on a machine without it.
    empty = outside / "bin"
    empty.mkdir()
    (empty / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(empty))
    forget_probe()
    try:
        (repo / "test_ok.py").write_text("def test_ok():\n    assert True\n")
        scripted.script = [calls(("run_tests", {"command": "python3 -m pytest -q"})), answer()]
        await drive(repo, scripted, overrides=_escaping_run_overrides("required"))
        (result,) = results_read(scripted)
        _count(result["success"] is False)
        assert result["success"] is False
        assert "requires an OS sandbox" in result["error"]
        assert "not installed" in result["error"]
        assert not (repo / ".pytest_cache").exists()

        # In "auto" the run goes ahead without it, and the person is told once.
        scripted.script = [
            calls(("run_tests", {"command": "python3 -m pytest -q -p no:cacheprovider"})),
            calls(("run_tests", {"command": "python3 -m pytest -p no:cacheprovider"})),
            answer(),
        ]
        await drive(repo, scripted, overrides=_escaping_run_overrides("auto"))
        first, second = results_read(scripted)
        assert first["success"] and second["success"]
        assert any("without an OS sandbox" in note for note in first["data"].get("notes", []))
        assert "notes" not in second["data"]
    finally:
        forget_probe()


@pytest.mark.parametrize("where", ["workspace_ini", "parent_ini"])
async def test_pytest_configuration_writing_outside_is_refused_without_the_sandbox(
    tmp_path: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """What only pytest knows (ini files' addopts and cache_dir, an ini above the workspace)
    is checked by the report plugin inside pytest, before pytest writes anything."""
    fast_pytest(monkeypatch)
    outside = tmp_path / "outside"
    outside.mkdir()
    if where == "workspace_ini":
        root = tmp_path / "ws"
        root.mkdir()
        (root / "pytest.ini").write_text(
            f"[pytest]\ncache_dir = {outside}/cache\naddopts = --basetemp={outside}/bt\n"
        )
    else:
        # The parent holds the ini file: pytest's rootdir, and its cache, land above the root.
        root = outside / "ws"
        root.mkdir()
        (outside / "pytest.ini").write_text("[pytest]\n")
    (root / "test_tmp.py").write_text("def test_tmp(tmp_path):\n    assert tmp_path.is_dir()\n")
    before = snapshot(outside, skip=("ws",))
    scripted.script = [calls(("run_tests", {"command": "pytest -q"})), answer()]
    await drive(root, scripted, overrides=_escaping_run_overrides("off"))
    (result,) = results_read(scripted)
    _count(result["success"] is False)
    assert result["success"] is False
    assert "Toolgate refused this test run" in result["data"]["output"], result
    assert snapshot(outside, skip=("ws",)) == before
    assert not (outside / ".pytest_cache").exists() and not (outside / "cache").exists()
