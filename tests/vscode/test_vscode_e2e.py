"""End to end in a real VS Code: code-server serves the workbench, headless Chromium drives it.

The scenarios live in client-vscode/e2e/run.mjs (Ask → diff → Accept; Reject with a reason;
a failing test in the Problems panel and its quick fix; Run Tests after that run finished;
and Restricted Mode, where tests are refused until the folder is trusted) and
client-vscode/e2e/chat.mjs (the chat view: a typed task, the streamed answer, a proposal
accepted and one rejected with a reason from their cards, a call's row opened on its arguments
and result, a highlighted code block, no id in the view's text, a two-hunk proposal decided
hunk by hunk on its card, Run Tests after the finished run, a
follow-up that needs the first turn, the `/` menu with a prompt file picked from it and
expanded for the model, the Customization panel, the turn header naming AGENTS.md, the
session found again after a reload), and the order
of a person after a run (client-vscode/e2e/chat.mjs `afterRunScenario`: ask, accept, the run
ends without running the tests, Run Tests twice with the failure in Problems each time, the
run's Undo button, the undo's own button that undoes the undo, a partial plan whose gap is
scaffolded and which is dropped, a ready plan approved and run, a reload of the window
that brings the plans and every run's end back, and Undo Last Run from the command palette,
drawn in the chat at once as after a reload), what the person points at
(client-vscode/e2e/eyes.mjs: the `@` menu and picker, the current file's chip, the model's
request holding the attached context, Edit Selection… ending in its diff, and Rewind on a
turn: code and conversation, taken back, conversation only), and a new person's first run
(client-vscode/e2e/firstrun.mjs: no Toolgate setting, a Python without Toolgate, the server the
.vsix carries installed into the extension's own environment, the walkthrough finding the
scripted model on a port it probes, the sample task's diff accepted, a warm start; then the
walkthrough's Test Connection, Check Setup and Install the Embedded Model buttons, the install
starting from the runtime wheel and model file an earlier install left in the cache). These tests
build the .vsix from the current sources, run each scenario against this interpreter's
`toolgate lsp`, and fail when a scenario fails. Screenshots and logs go to
test-artifacts/vscode/. Needs `bash scripts/install-vscode-test-deps.sh`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.checkout_build import building_from_checkout

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


@pytest.fixture(scope="module")
def vsix() -> Path:
    """The .vsix built from the current sources (skips when there is no server to start)."""
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
    npm = shutil.which("npm")
    assert npm and shutil.which("node"), "node and npm are needed to build the extension"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    if not (CLIENT / "node_modules" / ".package-lock.json").exists():
        installed = _run([npm, "ci", "--no-audit", "--no-fund"], 900, ARTIFACTS / "npm-ci.log")
        assert installed.returncode == 0, f"npm ci failed:\n{_tail(installed)}"
    with building_from_checkout():
        packaged = _run([npm, "run", "package"], 300, ARTIFACTS / "package.log")
    assert packaged.returncode == 0, f"npm run package failed:\n{_tail(packaged)}"
    assert VSIX.is_file(), f"no .vsix at {VSIX}"
    return VSIX


def _base_python() -> str:
    """The interpreter this test's environment was made from: a Python without Toolgate."""
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    has = subprocess.run([base, "-c", "import toolgate"], capture_output=True, timeout=60)
    if has.returncode == 0:
        pytest.skip(f"{base} has Toolgate installed: the first run needs a Python without it")
    return base


def _scenario(vsix: Path, name: str, *flags: str) -> None:
    """Run e2e/run.mjs with this interpreter's server; fail with its output when it fails."""
    node = shutil.which("node")
    assert node
    artifacts = ARTIFACTS if not flags else ARTIFACTS / name
    result = _run(
        [
            node,
            "e2e/run.mjs",
            "--python",
            sys.executable,
            "--vsix",
            str(vsix),
            "--artifacts",
            str(artifacts),
            *flags,
        ],
        2400 if name == "first-run" else 600,
        ARTIFACTS / f"{name}.log",
    )
    assert result.returncode == 0, (
        f"the VS Code scenario failed (screenshots and logs in {artifacts}):\n{_tail(result)}"
    )


def test_ask_accept_reject_and_problems_in_real_vscode(vsix: Path) -> None:
    _scenario(vsix, "e2e")
    for shot in ("diff.png", "problems.png", "quickfix.png", "problems-run-tests.png"):
        assert (ARTIFACTS / shot).stat().st_size > 10_000, f"{shot} is missing or empty"


def test_chat_view_conversation_in_real_vscode(vsix: Path) -> None:
    _scenario(vsix, "chat", "--chat")
    for shot in (
        "chat-card.png",  # a card waiting for review, its change inline
        "chat-turn1.png",
        "chat-tests.png",  # a finished run: its calls as rows, its tests, a highlighted block
        "problems-after-run.png",
        "chat-follow-up.png",
        "chat-slash-menu.png",
        "chat-customization.png",
        "chat-hunks.png",  # a two-hunk card, one hunk accepted on it, one waiting
        "chat-reloaded.png",
    ):
        path = ARTIFACTS / "chat" / shot
        assert path.stat().st_size > 10_000, f"{shot} is missing or empty"


def test_run_tests_undo_and_plans_after_a_finished_run_in_real_vscode(vsix: Path) -> None:
    _scenario(vsix, "after-run", "--after-run")
    for shot in (
        "problems-after-run.png",
        "chat-undone.png",  # an undo, named in words
        "chat-redone.png",
        "chat-plan-partial.png",
        "chat-plan-approved.png",
        "chat-plans-reloaded.png",
        "chat-palette-undo.png",
    ):
        path = ARTIFACTS / "after-run" / shot
        assert path.stat().st_size > 10_000, f"{shot} is missing or empty"


def test_context_selection_edit_and_rewind_in_real_vscode(vsix: Path) -> None:
    _scenario(vsix, "eyes", "--eyes")
    for shot in (
        "chat-mention-menu.png",
        "chat-mention-picker.png",
        "chat-attached.png",
        "selection-diff.png",
        "chat-rewound.png",
        "chat-rewind-taken-back.png",
    ):
        path = ARTIFACTS / "eyes" / shot
        assert path.stat().st_size > 10_000, f"{shot} is missing or empty"


def test_another_servers_problem_reaches_the_model_and_the_card_in_real_vscode(
    vsix: Path,
) -> None:
    """VS Code's TypeScript features check calc.ts; the agent's change adds a type error. The
    model's next request carries "new problems after this change: calc.ts:4 ts Cannot find name
    'c'." (and not the error the file had before), and the change's card names it."""
    _scenario(vsix, "problems", "--problems")
    assert (ARTIFACTS / "problems" / "chat-problems.png").stat().st_size > 10_000


def test_restricted_workspace_refuses_tests_until_trusted(vsix: Path) -> None:
    _scenario(vsix, "restricted", "--restricted")
    assert (ARTIFACTS / "restricted" / "restricted.png").stat().st_size > 10_000


def _embedded_model_left() -> tuple[Path, Path]:
    """The kept runtime wheel folder and the assembled model an earlier install left here.

    The walkthrough's install button starts from them, as on a machine where the model was
    installed before: compiling the runtime (about 10 minutes) and downloading the model's
    470 MB of parts are left to scripts/install-local-model.sh, which made them.
    """
    from toolgate.model.local_assets import MODEL_FILE_NAME, default_cache_dir
    from toolgate.setup.model_install import build_flags, model_cached, wheel_dir

    wheels = wheel_dir(build_flags(os.environ), os.environ)
    model = default_cache_dir() / MODEL_FILE_NAME
    assert any(wheels.glob("*.whl")) and model_cached(), (
        f"no kept runtime wheel in {wheels} or no verified model at {model}: "
        "run `bash scripts/install-local-model.sh` first"
    )
    return wheels, model


@pytest.mark.local_model
def test_first_run_from_the_vsix_to_an_accepted_diff(vsix: Path) -> None:
    wheels, model = _embedded_model_left()
    _scenario(
        vsix,
        "first-run",
        "--first-run",
        "--base-python",
        _base_python(),
        "--runtime-wheels",
        str(wheels),
        "--model-file",
        str(model),
    )
    folder = ARTIFACTS / "first-run"
    for shot in (
        "walkthrough-opened.png",
        "walkthrough.png",
        "first-diff.png",
        "walkthrough-check-setup-no-model.png",
        "walkthrough-reopened.png",
        "walkthrough-test-connection.png",
        "walkthrough-check-setup.png",
        "walkthrough-installing-model.png",
        "walkthrough-model-installed.png",
        "walkthrough-check-setup-embedded.png",
        "embedded-model-run.png",
    ):
        assert (folder / shot).stat().st_size > 10_000, f"{shot} is missing or empty"
    found = json.loads((folder / "first-run.json").read_text(encoding="utf-8"))
    assert found["steps"][-1] == "Accept the diff"
    assert found["firstStartSeconds"]["install"] > 0
    assert found["warmStartSeconds"]["serverReady"] < found["firstStartSeconds"]["serverReady"]
    assert "A run cannot start until this is fixed: endpoint." in found["checkSetupBeforeModel"]
    buttons = found["setupButtons"]
    assert "A run can start here." in buttons["checkSetup"]
    assert "the embedded model is installed (took" in buttons["installMessage"]
    assert "installed; it answers" in buttons["checkSetupEmbedded"]
    assert buttons["run"].endswith("weak on real tasks.")
