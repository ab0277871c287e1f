"""The package as people install it: `python -m build`, then the wheel in a fresh virtual
environment with a temporary HOME, outside the checkout.

The wheel and the sdist carry what runs: the schemas, the profiles, the pytest plugin and
`py.typed`. Installed, `toolgate --version`, `toolgate lsp`, `toolgate doctor` and a
`toolgate run` against the scripted model work, with the package's own files (the run's
`run_tests` loads the pytest plugin from the installed package).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
from tests.conftest import git
from tests.support.checkout_build import building_from_checkout
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate import __version__

ROOT = Path(__file__).resolve().parents[2]

# What a run needs besides the modules, as the wheel names them.
RUN_TIME_FILES = (
    "toolgate/py.typed",
    "toolgate/agent/profiles/developer.md",
    "toolgate/agent/profiles/reviewer.md",
    "toolgate/schemas/code-review.schema.json",
    "toolgate/schemas/plan.schema.json",
    "toolgate/schemas/tool-manifest.schema.json",
    "toolgate/schemas/workflow.schema.json",
    "toolgate/testing/pytest_plugin/toolgate_pytest_report.py",
)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and sdist `python -m build` makes from the checkout."""
    out = tmp_path_factory.mktemp("dist")
    with building_from_checkout():
        done = subprocess.run(
            [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
            capture_output=True,
            text=True,
            timeout=900,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_the_wheel_and_the_sdist_carry_what_a_run_needs(dist: Path) -> None:
    wheel = _one(dist, f"toolgate-{__version__}-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = archive.read(f"toolgate-{__version__}.dist-info/entry_points.txt").decode()
    missing = [name for name in RUN_TIME_FILES if name not in names]
    assert missing == []
    assert "toolgate = toolgate.cli:main" in entry_points
    assert "toolgate/setup/doctor.py" in names and "toolgate/setup/model_install.py" in names
    sdist = _one(dist, f"toolgate-{__version__}.tar.gz")
    with tarfile.open(sdist) as archive:
        members = set(archive.getnames())
    top = f"toolgate-{__version__}"
    missing = [name for name in RUN_TIME_FILES if f"{top}/server/{name}" not in members]
    assert missing == []
    assert f"{top}/pyproject.toml" in members and f"{top}/README.md" in members


def _lsp_initialize(toolgate: Path, cwd: Path, env: dict[str, str]) -> dict[str, object]:
    """Start `toolgate lsp`, send initialize, and read its answer; then shut it down."""

    def frame(message: dict[str, object]) -> bytes:
        body = json.dumps(message).encode()
        return f"Content-Length: {len(body)}\r\n\r\n".encode() + body

    process = subprocess.Popen(
        [str(toolgate), "lsp"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        params = {"processId": None, "rootUri": cwd.as_uri(), "capabilities": {}}
        process.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        )
        process.stdin.flush()
        length = 0
        while line := process.stdout.readline().strip():
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        answer: dict[str, object] = json.loads(process.stdout.read(length))
        process.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        process.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        process.stdin.close()
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return answer


def test_the_wheel_installed_outside_the_checkout_serves_checks_and_runs(
    dist: Path, tmp_path: Path, scripted: ScriptedModel
) -> None:
    wheel = _one(dist, "toolgate-*.whl")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "VIRTUAL_ENV", "XDG_", "TOOLGATE", "OPENAI"))
    }
    env.update(
        HOME=str(home),
        # pip's cache stays the machine's: only the download is saved, nothing of Toolgate's.
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
        NO_COLOR="1",
    )
    prefix = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(prefix)
    bin_dir = prefix / "bin"
    # Outside the checkout, with PATH holding the environment first (its pytest runs the tests).
    env["PATH"] = os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"])
    installed = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheel), "pytest"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    toolgate = bin_dir / "toolgate"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(toolgate), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )

    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import toolgate; print(toolgate.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.stdout.strip().startswith(str(prefix)), where.stdout + where.stderr

    version = run("--version")
    assert version.stdout.strip() == f"toolgate {__version__}"

    answer = _lsp_initialize(toolgate, tmp_path, env)
    result = answer["result"]
    assert isinstance(result, dict) and "executeCommandProvider" in result["capabilities"]
    assert "toolgate.doctor" in result["capabilities"]["executeCommandProvider"]["commands"]

    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (project / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n", encoding="utf-8"
    )
    endpoint = ["--base-url", scripted.base_url, "--model", scripted.model]

    scripted.script = [tool_call("report_ready", ready=True)]
    doctor = run("doctor", "--workspace", str(project), *endpoint)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert doctor.stdout.rstrip().endswith("A run can start here.")
    assert "native tool calling works" in doctor.stdout

    scripted.script = [
        tool_call("write_file", path="calc.py", content="def add(a, b):\n    return a + b\n"),
        tool_call("run_tests"),
        {"content": "add adds now."},
    ]
    done = run("run", "Fix add", "--workspace", str(project), *endpoint, "--approve", "auto")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "calc.py").read_text(encoding="utf-8") == "def add(a, b):\n    return a + b\n"
    assert "tests: 1 passed, 0 failed" in done.stderr
    assert done.stdout.strip() == "add adds now."
