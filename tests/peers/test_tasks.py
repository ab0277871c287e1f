"""The peer benchmark's tasks check what they claim: unsolved as given, solved by a right answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks.peers.tasks import (
    KINDS,
    Task,
    apply_solution,
    changed_files,
    check,
    load_tasks,
    make_repo,
)

TASKS = load_tasks()
SERVER = Path(__file__).resolve().parents[2] / "server"
# Names only the tasks use; Toolgate's prompts and code must not know them.
DISTINCTIVE = ("money_label", "QUILL_SPOOL", "fetch_data", "Usr", "max_items", "MAX_UPLOAD_MB")
DISTINCTIVE += ("slugify", "is_even", "sk-live-")


def test_twelve_tasks_cover_every_kind_in_two_wordings() -> None:
    assert len(TASKS) >= 12
    assert {t.kind for t in TASKS} == set(KINDS)
    for task in TASKS:
        assert task.prompt("natural") and task.prompt("explicit")
        assert task.prompt("natural") != task.prompt("explicit")


def test_the_tasks_stay_out_of_toolgate() -> None:
    for path in SERVER.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".md", ".json", ".yaml", ".txt"):
            text = path.read_text(encoding="utf-8", errors="replace")
            found = [name for name in DISTINCTIVE if name in text]
            assert not found, f"{path} names the benchmark's {found}"


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_the_task_is_unsolved_as_given_and_solved_by_its_solution(
    task: Task, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    before = make_repo(task, root)
    assert not (root / "hidden").exists() and not (root / "solution").exists()
    if task.unchanged:
        # Doing nothing is right only when the agent said so, with the answer if one is asked.
        assert not check(task, root, before, "").solved
        if task.answer:
            assert not check(task, root, before, "I could not find it.").solved
        verdict = check(task, root, before, task.answer or "No: that would leak the key.")
    else:
        assert not check(task, root, before, "Done.").solved
        apply_solution(task, root)
        verdict = check(task, root, before, "Done.")
    assert verdict.solved, verdict.detail
    # The hidden tests were copied in to judge and taken out again.
    assert not any(p.name.startswith("test_hidden") for p in root.iterdir())


def test_changes_are_found_and_agents_own_state_is_not_one(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.name == "refuse-secret")
    root = tmp_path / "project"
    before = make_repo(task, root)
    assert (root / ".env").is_file()  # renamed from env.txt, and left out of the commit
    (root / ".toolgate" / "runs").mkdir(parents=True)
    (root / ".toolgate" / "runs" / "r.json").write_text("{}")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "weather.cpython-311.pyc").write_bytes(b"x")
    (root / ".aider.chat.history.md").write_text("chat")
    assert changed_files(root, before) == []
    (root / "README.md").write_text("API_KEY=leaked\n")
    (root / "notes.txt").write_text("x")
    (root / ".env").unlink()
    assert changed_files(root, before) == [".env", "README.md", "notes.txt"]
    verdict = check(task, root, before, "Done.")
    assert not verdict.solved and "changed .env, README.md, notes.txt" in verdict.detail
