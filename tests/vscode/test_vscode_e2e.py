"""End to end in a real VS Code: code-server serves the workbench, headless Chromium drives it.

The scenario lives in client-vscode/e2e/run.mjs (Ask → diff → Accept; Reject with a reason;
a failing test in the Problems panel); this test builds the .vsix from the current sources,
runs the scenario against this interpreter's `toolgate lsp`, and fails when the scenario fails.
Screenshots and logs go to test-artifacts/vscode/. Needs `bash scripts/install-vscode-test-deps.sh`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "client-vscode"
ARTIFACTS = ROOT / "test-artifacts" / "vscode"
VSIX = CLIENT / "dist" / "toolgate-vscode.vsix"

pytestmark = pytest.mark.vscode


def _run(cmd: list[str], timeout: float, log: Path) -> subprocess.CompletedProcess[str]:
    """Run a command in client-vscode/, keep its output in `log`, and return it."""
    result = subprocess.run(
        cmd, cwd=CLIENT, capture_output=True, text=True, timeout=timeout, env=os.environ.copy()
    )
    log.write_text(f"$ {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return result


def _tail(result: subprocess.CompletedProcess[str], lines: int = 60) -> str:
    return "\n".join((result.stdout + "\n" + result.stderr).splitlines()[-lines:])


def test_ask_accept_reject_and_problems_in_real_vscode() -> None:
    probe = subprocess.run(
        [sys.executable, "-m", "toolgate", "lsp", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        pytest.skip(
            f"`{sys.executable} -m toolgate lsp` is not available yet, so there is no server "
            f"for the extension to start: {probe.stderr.strip()[-300:]}"
        )
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "node and npm are needed to build the extension"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    if not (CLIENT / "node_modules" / ".package-lock.json").exists():
        installed = _run([npm, "ci", "--no-audit", "--no-fund"], 900, ARTIFACTS / "npm-ci.log")
        assert installed.returncode == 0, f"npm ci failed:\n{_tail(installed)}"
    packaged = _run([npm, "run", "package"], 300, ARTIFACTS / "package.log")
    assert packaged.returncode == 0, f"npm run package failed:\n{_tail(packaged)}"
    assert VSIX.is_file(), f"no .vsix at {VSIX}"

    scenario = _run(
        [
            node,
            "e2e/run.mjs",
            "--python",
            sys.executable,
            "--vsix",
            str(VSIX),
            "--artifacts",
            str(ARTIFACTS),
        ],
        600,
        ARTIFACTS / "e2e.log",
    )
    assert scenario.returncode == 0, (
        f"the VS Code scenario failed (screenshots and logs in {ARTIFACTS}):\n{_tail(scenario)}"
    )
    for shot in ("diff.png", "problems.png"):
        assert (ARTIFACTS / shot).stat().st_size > 10_000, f"{shot} is missing or empty"
