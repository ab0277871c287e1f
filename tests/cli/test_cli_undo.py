"""`toolgate undo` after real runs: files back byte for byte, refusals, undo of an undo."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from tests.cli.helpers import toolgate, toolgate_task
from tests.support.scripted_model import ScriptedModel, tool_call

# Conventions a text-level restore would lose: a byte-order mark, CRLF, no final newline.
CRLF_BOM = b"\xef\xbb\xbfline one\r\nline two\r\nlast"
LATIN = "caf\xe9 au lait\n".encode("latin-1")


def _tree(root: Path) -> dict[str, str]:
    """Every file below root (outside .git and .toolgate) with its content's hash."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", ".toolgate") or not path.is_file():
            continue
        found[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _run(repo: Path, scripted: ScriptedModel) -> None:
    done = toolgate_task("run", "Change the files.", repo, scripted, "--approve", "auto")
    assert done.returncode == 0, done.stderr


def _undo(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return toolgate("undo", "--workspace", str(repo), *extra)


def _changing_run(repo: Path, scripted: ScriptedModel) -> None:
    (repo / "crlf.txt").write_bytes(CRLF_BOM)
    (repo / "latin.txt").write_bytes(LATIN)
    scripted.script = [
        tool_call("write_file", path="crlf.txt", content="replaced\nentirely\n"),
        tool_call("edit_file", path="latin.txt", search="au lait", replace="noir"),
        tool_call("edit_file", path="README.md", search="Tiny", replace="Small"),
        tool_call("write_file", path="pkg/new.py", content="print('new')\n"),
        tool_call("edit_file", path="README.md", search="Small", replace="Smaller"),
        {"content": "Done."},
    ]
    _run(repo, scripted)


def test_undo_restores_every_file_byte_for_byte_and_removes_created_ones(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "crlf.txt").write_bytes(CRLF_BOM)
    (repo / "latin.txt").write_bytes(LATIN)
    before = _tree(repo)
    _changing_run(repo, scripted)
    after = _tree(repo)
    assert after != before and (repo / "pkg" / "new.py").exists()
    assert (repo / "README.md").read_text() == "# Smaller project\n"

    dry = _undo(repo, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    listed = {f["path"]: f["action"] for f in json.loads(dry.stdout)["files"]}
    assert listed == {
        "crlf.txt": "restore",
        "latin.txt": "restore",
        "README.md": "restore",
        "pkg/new.py": "remove",
    }
    assert _tree(repo) == after  # a dry run changes nothing
    assert ": would restore 4 files" in _undo(repo, "--dry-run").stderr

    done = _undo(repo)
    assert done.returncode == 0, done.stderr
    assert ": restored 4 files" in done.stderr
    assert _tree(repo) == before
    assert (repo / "crlf.txt").read_bytes() == CRLF_BOM
    assert (repo / "latin.txt").read_bytes() == LATIN
    assert not (repo / "pkg" / "new.py").exists()
    # Only the touched files were kept: the store holds four entries, three saved copies.
    store = next((repo / ".toolgate" / "runs").glob("r-*.checkpoint"))
    assert len(list((store / "blobs").iterdir())) == 3


def test_a_file_changed_since_the_run_is_left_alone_unless_forced(
    repo: Path, scripted: ScriptedModel
) -> None:
    _changing_run(repo, scripted)
    (repo / "README.md").write_text("# The person's own words\n")
    refused = _undo(repo)
    assert refused.returncode == 1
    assert "changed_since" in refused.stdout and "README.md" in refused.stdout
    assert "--force" in refused.stderr
    assert (repo / "README.md").read_text() == "# The person's own words\n"
    # The files nobody touched since are restored all the same.
    assert (repo / "crlf.txt").read_bytes() == CRLF_BOM
    assert not (repo / "pkg" / "new.py").exists()


def test_force_restores_a_file_changed_since(repo: Path, scripted: ScriptedModel) -> None:
    _changing_run(repo, scripted)
    (repo / "README.md").write_text("# The person's own words\n")
    forced = _undo(repo, "--force")
    assert forced.returncode == 0, forced.stderr
    assert (repo / "README.md").read_text() == "# Tiny project\n"


def test_undo_of_an_undo_brings_the_run_back(repo: Path, scripted: ScriptedModel) -> None:
    _changing_run(repo, scripted)
    after = _tree(repo)
    first = _undo(repo, "--json")
    assert first.returncode == 0, first.stderr
    undo_id = json.loads(first.stdout)["undoRunId"]
    again = _undo(repo)  # the undone run is refused: it was undone already
    assert again.returncode == 0, again.stderr  # the latest run is the undo itself
    assert _tree(repo) == after
    assert (repo / "crlf.txt").read_bytes() != CRLF_BOM
    # Undoing the undo once more (by its id) is refused: it is undone already.
    twice = _undo(repo, undo_id)
    assert twice.returncode == 1 and "already undone" in twice.stderr


def test_undoing_a_redo_undoes_the_run_again(repo: Path, scripted: ScriptedModel) -> None:
    _changing_run(repo, scripted)
    changed = _tree(repo)
    first = _undo(repo, "--json")
    assert first.returncode == 0, first.stderr
    undone = _tree(repo)
    run_id, undo_id = json.loads(first.stdout)["runId"], json.loads(first.stdout)["undoRunId"]
    redo = _undo(repo, undo_id, "--json")
    assert redo.returncode == 0, redo.stderr
    assert _tree(repo) == changed
    # Undoing the redo puts the undo back in effect: the run is undone again, by that undo.
    again = _undo(repo, json.loads(redo.stdout)["undoRunId"])
    assert again.returncode == 0, again.stderr
    assert _tree(repo) == undone
    refused = _undo(repo, run_id)
    assert refused.returncode == 1
    assert f"already undone by {undo_id}" in refused.stderr
    # ... and undoing that undo once more brings the run back, as the first redo did.
    second_redo = _undo(repo, undo_id)
    assert second_redo.returncode == 0, second_redo.stderr
    assert _tree(repo) == changed


def test_commits_the_run_made_are_named_not_rewritten(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("write_file", path="notes.txt", content="notes\n"),
        tool_call("git_add", files=["notes.txt"]),
        tool_call("git_commit", message="Add notes"),
        {"content": "Committed."},
    ]
    _run(repo, scripted)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    done = _undo(repo)
    assert done.returncode == 0, done.stderr
    assert f"git revert --no-edit {head}" in done.stderr
    assert not (repo / "notes.txt").exists()
    still = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert still == head  # history untouched


def test_nothing_to_undo_is_a_clear_refusal(repo: Path) -> None:
    done = _undo(repo)
    assert done.returncode == 1 and "nothing to undo" in done.stderr
    unknown = _undo(repo, "r-unknown")
    assert unknown.returncode == 1 and "nothing to undo" in unknown.stderr


def test_a_damaged_checkpoint_is_refused_and_nothing_changes(
    repo: Path, scripted: ScriptedModel
) -> None:
    _changing_run(repo, scripted)
    after = _tree(repo)
    store = next((repo / ".toolgate" / "runs").glob("r-*.checkpoint"))
    blob = next((store / "blobs").iterdir())
    blob.write_bytes(b"not what was saved")
    done = _undo(repo)
    assert done.returncode == 1 and "damaged" in done.stderr
    assert _tree(repo) == after
    (store / "checkpoint.json").write_text("{ not json")
    done = _undo(repo, store.name.removesuffix(".checkpoint"))
    assert done.returncode == 1 and "cannot be read" in done.stderr
    assert _tree(repo) == after
