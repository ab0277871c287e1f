"""Files changed by an allowed command or a test run are kept in the run's checkpoint.

A formatter run through `run_command`, or a test that writes files, changes the workspace
without a proposal; `toolgate undo` puts those files back too, byte for byte, removes the ones
the command created and restores the ones it removed. Ignored files are not Toolgate's to keep.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from pathlib import Path

import pytest
from tests.cli.helpers import toolgate
from tests.engine.helpers import answer, calls, drive, fast_pytest, results_read
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.agent.checkpoints import Checkpoint, latest_run

CRLF = b"x  =  1\r\ny=2\r\n"
# The "formatter": rewrites style.py, creates made.txt, removes old.txt, writes an ignored file.
FORMATTER = (
    "import os, pathlib\n"
    "pathlib.Path('style.py').write_bytes(b'x = 1\\ny = 2\\n')\n"
    "pathlib.Path('made.txt').write_text('made by the command\\n')\n"
    "os.remove('old.txt')\n"
    "os.makedirs('build', exist_ok=True)\n"
    "pathlib.Path('build/out.txt').write_text('ignored output\\n')\n"
)
ALLOW_PYTHON = {"policy": {"allowed_commands": ["pytest", shlex.quote(sys.executable)]}}


def _tree(root: Path) -> dict[str, str]:
    """Every file below root (outside .git and .toolgate) with its content's hash."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.relative_to(root).parts[0] not in (".git", ".toolgate")
    }


def _project(repo: Path) -> None:
    (repo / "style.py").write_bytes(CRLF)
    (repo / "old.txt").write_text("to be removed\n")
    (repo / ".gitignore").write_text("build/\n")
    (repo / "fmt.py").write_text(FORMATTER)


def _undo(repo: Path, *extra: str, status: int = 0) -> dict[str, str]:
    """`toolgate undo` on repo: what it did (or would do) to each file."""
    done = toolgate("undo", "--workspace", str(repo), "--json", *extra)
    assert done.returncode == status, done.stderr
    return {f["path"]: f["action"] for f in json.loads(done.stdout)["files"]}


async def test_undo_puts_back_what_an_allowed_command_changed(
    repo: Path, scripted: ScriptedModel
) -> None:
    _project(repo)
    before = _tree(repo)
    scripted.script = [
        tool_call("run_command", command=f"{shlex.quote(sys.executable)} fmt.py"),
        tool_call("write_file", path="notes.txt", content="the model's own change\n"),
        answer(),
    ]
    await drive(repo, scripted, overrides=ALLOW_PYTHON)
    (ran, wrote) = results_read(scripted)
    assert ran["success"] is True, ran
    assert (repo / "style.py").read_bytes() == b"x = 1\ny = 2\n"
    assert not (repo / "old.txt").exists() and (repo / "made.txt").exists()

    run_id = latest_run(repo)
    assert run_id is not None
    kept = Checkpoint.load(repo, run_id).files
    # Only what changed is kept: not fmt.py, not README.md, not the ignored build output.
    assert sorted(kept) == ["made.txt", "notes.txt", "old.txt", "style.py"]

    assert _undo(repo, "--dry-run") == {
        "made.txt": "remove",
        "notes.txt": "remove",
        "old.txt": "restore",
        "style.py": "restore",
    }
    _undo(repo)
    after = _tree(repo)
    assert after.pop("build/out.txt")  # ignored: never Toolgate's to keep or remove
    assert after == before
    assert (repo / "style.py").read_bytes() == CRLF


async def test_a_test_run_that_writes_files_is_undone_and_a_later_edit_is_respected(
    repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_pytest(monkeypatch)
    (repo / "data.txt").write_text("original data\n")
    (repo / "test_writes.py").write_text(
        "import pathlib\n\n\ndef test_writes():\n"
        "    pathlib.Path('data.txt').write_text('overwritten by a test\\n')\n"
        "    pathlib.Path('fixture.txt').write_text('left by a test\\n')\n"
    )
    scripted.script = [calls(("run_tests", {"command": "pytest -q -p no:cacheprovider"})), answer()]
    await drive(repo, scripted)
    (result,) = results_read(scripted)
    assert result["data"]["passed"] is True, result
    assert (repo / "fixture.txt").exists()

    # The person changes the fixture after the run: undo leaves it alone and says so.
    (repo / "fixture.txt").write_text("the person's own text\n")
    assert _undo(repo, "--dry-run") == {"data.txt": "restore", "fixture.txt": "changed_since"}
    done = toolgate("undo", "--workspace", str(repo))
    assert done.returncode == 1, done.stderr  # 1: a file was left alone, and it says so
    assert ": restored 1 file\n" in done.stderr
    assert "1 file changed since the run was left alone; --force" in done.stderr
    assert (repo / "data.txt").read_text() == "original data\n"
    assert (repo / "fixture.txt").read_text() == "the person's own text\n"
