import asyncio
import os
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest
from tests.support.processes import alive

from toolgate.runner.allowlist import split_command
from toolgate.runner.process import resolve_executable, run_process

PY = sys.executable


def wait_dead(pids: list[int], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


SPAWNER = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    if sys.argv[2] == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    print("spawned", flush=True)
    time.sleep(120)
    """
)


def exists(path: Path) -> bool:
    return path.exists()


def same_dir(a: str | Path, b: str | Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


async def wait_for_file(path: Path, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not exists(path):  # noqa: ASYNC110 - the child writes the file, no event to wait on
        assert time.monotonic() < deadline, "the child never wrote its pids"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("mode", ["plain", "ignore-term"])
async def test_timeout_kills_the_whole_process_group(tmp_path, mode):
    pids_file = tmp_path / "pids"
    started = time.monotonic()
    outcome = await run_process(
        [PY, "-c", SPAWNER, str(pids_file), mode],
        tmp_path,
        timeout_seconds=3,
        max_output_bytes=10_000,
    )
    assert outcome.timed_out
    assert outcome.exit_code is None
    assert "spawned" in outcome.output
    assert "timed out after 3 s" in outcome.output
    assert time.monotonic() - started < 20
    pids = [int(pid) for pid in pids_file.read_text().split()]
    assert len(pids) == 2
    assert wait_dead(pids), f"still alive: {[pid for pid in pids if alive(pid)]}"


async def test_cancellation_kills_the_whole_process_group(tmp_path):
    pids_file = tmp_path / "pids"
    task = asyncio.ensure_future(
        run_process(
            [PY, "-c", SPAWNER, str(pids_file), "plain"],
            tmp_path,
            timeout_seconds=120,
            max_output_bytes=10_000,
        )
    )
    await wait_for_file(pids_file)
    pids = [int(pid) for pid in pids_file.read_text().split()]
    assert all(alive(pid) for pid in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_dead(pids)


async def test_a_background_child_holding_the_pipe_does_not_keep_us_waiting(tmp_path):
    script = textwrap.dedent(
        """
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        print(child.pid, flush=True)
        """
    )
    started = time.monotonic()
    outcome = await run_process(
        [PY, "-c", script], tmp_path, timeout_seconds=60, max_output_bytes=10_000
    )
    assert time.monotonic() - started < 15
    assert outcome.exit_code == 0
    assert not outcome.timed_out
    assert wait_dead([int(outcome.output.split()[0])])


async def test_huge_output_is_capped_while_reading(tmp_path):
    script = textwrap.dedent(
        """
        import sys
        line = "x" * 99 + "\\n"
        block = line * 1000
        sys.stdout.write("FIRST LINE\\n")
        for _ in range(500):
            sys.stdout.write(block)
        sys.stdout.write("LAST LINE\\n")
        """
    )
    tracemalloc.start()
    try:
        outcome = await run_process(
            [PY, "-c", script], tmp_path, timeout_seconds=60, max_output_bytes=20_000
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    expected = len("FIRST LINE\n") + 500 * 100_000 + len("LAST LINE\n")
    assert outcome.exit_code == 0
    assert outcome.output_size_bytes == expected
    assert outcome.output_truncated
    assert len(outcome.output.encode()) <= 20_000
    assert outcome.output.startswith("FIRST LINE\n")
    assert outcome.output.endswith("LAST LINE\n")
    assert "bytes omitted" in outcome.output
    # 50 MB went through; memory stayed at a few times the cap.
    assert peak < 5_000_000, peak


async def test_a_missing_executable_is_an_outcome_not_an_exception(tmp_path):
    outcome = await run_process(
        ["no-such-program-here", "-q"], tmp_path, timeout_seconds=5, max_output_bytes=1_000
    )
    assert outcome.exit_code is None
    assert not outcome.timed_out
    assert "command not found" in outcome.output
    assert "no-such-program-here" in outcome.output


async def test_a_missing_working_directory_is_an_outcome(tmp_path):
    outcome = await run_process(
        [PY, "-c", "pass"], tmp_path / "nope", timeout_seconds=5, max_output_bytes=1_000
    )
    assert outcome.exit_code is None
    assert "working directory does not exist" in outcome.output


async def test_no_shell_interprets_the_command(tmp_path):
    command = f'{PY} -c "import sys; print(sys.argv[1:])" ; touch x && touch y $(touch z) `touch w`'
    argv = split_command(command)
    outcome = await run_process(argv, tmp_path, timeout_seconds=10, max_output_bytes=10_000)
    assert outcome.exit_code == 0
    assert "';'" in outcome.output and "'&&'" in outcome.output and "'$(touch'" in outcome.output
    for name in "xyzw":
        assert not (tmp_path / name).exists()


async def test_exit_code_stdout_and_stderr_interleaved(tmp_path):
    script = (
        "import sys\n"
        "print('out 1', flush=True)\n"
        "print('err 1', file=sys.stderr, flush=True)\n"
        "print('out 2', flush=True)\n"
        "sys.exit(3)\n"
    )
    outcome = await run_process(
        [PY, "-c", script], tmp_path, timeout_seconds=10, max_output_bytes=1_000
    )
    assert outcome.exit_code == 3
    assert outcome.output == "out 1\nerr 1\nout 2\n"
    assert not outcome.output_truncated
    assert outcome.output_size_bytes == len(outcome.output)
    assert outcome.duration_seconds > 0


async def test_env_overrides_and_secrets_are_dropped(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("INHERITED_SETTING", "kept")
    script = (
        "import os\n"
        "print(os.environ.get('EXTRA'), os.environ.get('INHERITED_SETTING'),"
        " os.environ.get('OPENAI_API_KEY'))\n"
    )
    outcome = await run_process(
        [PY, "-c", script],
        tmp_path,
        timeout_seconds=10,
        max_output_bytes=1_000,
        env={"EXTRA": "given"},
    )
    assert outcome.output.split() == ["given", "kept", "None"]

    # A caller handing over a copy of the whole environment does not pass the secret on either.
    outcome = await run_process(
        [PY, "-c", script],
        tmp_path,
        timeout_seconds=10,
        max_output_bytes=1_000,
        env={**os.environ, "EXTRA": "again"},
    )
    assert outcome.output.split() == ["again", "kept", "None"]


async def test_cwd_and_stdin(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    script = "import os, sys\nprint(os.getcwd())\nprint(repr(sys.stdin.read()))\n"
    outcome = await run_process(
        [PY, "-c", script], folder, timeout_seconds=10, max_output_bytes=1_000
    )
    cwd, stdin = outcome.output.splitlines()
    assert same_dir(cwd, folder)
    # stdin is /dev/null: a read ends at once instead of hanging.
    assert stdin == "''"


def make_fake_venv(folder: Path, names: list[str]) -> Path:
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in names:
        path = bin_dir / name
        path.write_text(f'#!/bin/sh\nexec "{PY}" "$@"\n')
        path.chmod(0o755)
    return bin_dir


def test_resolve_prefers_the_workspace_venv(tmp_path):
    bin_dir = make_fake_venv(tmp_path, ["python", "pytest"])
    assert resolve_executable(["python", "-m", "pytest"], tmp_path) == [
        str(bin_dir / "python"),
        "-m",
        "pytest",
    ]
    assert resolve_executable(["python3", "-V"], tmp_path) == [str(bin_dir / "python"), "-V"]
    assert resolve_executable(["pytest", "-q"], tmp_path) == [str(bin_dir / "pytest"), "-q"]


def test_resolve_uses_venv_python_for_pytest_without_its_script(tmp_path):
    bin_dir = make_fake_venv(tmp_path, ["python"])
    assert resolve_executable(["pytest", "-q"], tmp_path) == [
        str(bin_dir / "python"),
        "-m",
        "pytest",
        "-q",
    ]


def test_resolve_finds_the_venv_of_the_root_from_a_subfolder(tmp_path):
    bin_dir = make_fake_venv(tmp_path, ["python"])
    sub = tmp_path / "pkg" / "tests"
    sub.mkdir(parents=True)
    assert resolve_executable(["python", "-V"], sub, root=tmp_path) == [
        str(bin_dir / "python"),
        "-V",
    ]
    # Without a root only the working directory itself is searched.
    assert resolve_executable(["python", "-V"], sub)[0] != str(bin_dir / "python")


def test_resolve_falls_back_to_path_then_to_our_interpreter(tmp_path, monkeypatch):
    tools = tmp_path / "tools"
    tools.mkdir()
    fake = tools / "pytest"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    assert resolve_executable(["pytest", "-q"], tmp_path) == [str(fake), "-q"]

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert resolve_executable(["pytest", "-q"], tmp_path) == [PY, "-m", "pytest", "-q"]
    assert resolve_executable(["python", "-m", "pytest"], tmp_path) == [PY, "-m", "pytest"]
    assert resolve_executable(["git", "status"], tmp_path) == ["git", "status"]


async def test_a_command_that_closes_its_output_is_still_waited_for(tmp_path):
    script = "import os, time\nprint('bye', flush=True)\nos.close(1)\ntime.sleep(1.5)\n"
    outcome = await run_process(
        [PY, "-c", script], tmp_path, timeout_seconds=30, max_output_bytes=1_000
    )
    assert outcome.exit_code == 0
    assert outcome.output == "bye\n"
    assert outcome.duration_seconds >= 1.4


async def test_a_command_that_closes_its_output_still_times_out(tmp_path):
    script = "import os, time\nos.close(1)\ntime.sleep(60)\n"
    outcome = await run_process(
        [PY, "-c", script], tmp_path, timeout_seconds=1, max_output_bytes=1_000
    )
    assert outcome.timed_out
    assert outcome.exit_code is None
