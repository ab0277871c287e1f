"""The benchmark's tasks: each a tiny project, two wordings, and tests the agent never sees.

A task is a folder of `tasks/`:

    task.toml   kind, the natural and the explicit wording, and what the check asks
    repo/       the project the agent gets, committed in a fresh git repository
    hidden/     tests copied in only after the agent is done (none for a question)
    solution/   the files a right answer changes, for checking the task itself (never shown)

`task.toml` keys: `kind` (fix, add, rename, config, question, multi-file, refuse), `natural`,
`explicit`, `keep` (files that must stay as they were, such as the test that shows the bug),
`unchanged` (nothing in the project may change), `answer` (a regular expression the model's
words in the run must match: its text, not its tool calls) and `renames` (repo files given
another name in the project, e.g. a `.env` kept in this repository under a name no tool takes
for a real one).

A run is solved when the project's tests and the hidden ones pass, no kept file changed, and,
for `unchanged` tasks, nothing changed at all, the model said something (an agent that never
reached the model has not refused anything) and the answer, if any, is in what it said.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
WORDINGS = ("natural", "explicit")
KINDS = ("fix", "add", "rename", "config", "question", "multi-file", "refuse")
CHECK_TIMEOUT = 120
# What agents leave beside the project for themselves: not a change to the project.
_STATE = re.compile(r"(^|/)(__pycache__|\.pytest_cache)(/|$)|\.pyc$|^\.aider")


@dataclass(frozen=True)
class Task:
    """One task as its folder describes it."""

    name: str
    kind: str
    natural: str
    explicit: str
    folder: Path
    keep: tuple[str, ...] = ()
    unchanged: bool = False
    answer: str = ""
    renames: dict[str, str] = field(default_factory=dict)

    def prompt(self, wording: str) -> str:
        """The task in the given wording."""
        if wording not in WORDINGS:
            raise ValueError(f"no wording {wording!r}: {', '.join(WORDINGS)}")
        return self.natural if wording == "natural" else self.explicit


def load_tasks(folder: Path = TASKS_DIR) -> list[Task]:
    """Every task under the folder, by name."""
    tasks = []
    for spec in sorted(folder.glob("*/task.toml")):
        doc = tomllib.loads(spec.read_text(encoding="utf-8"))
        kind = doc["kind"]
        if kind not in KINDS:
            raise ValueError(f"{spec}: kind {kind!r} is not one of {', '.join(KINDS)}")
        tasks.append(
            Task(
                name=spec.parent.name,
                kind=kind,
                natural=" ".join(doc["natural"].split()),
                explicit=" ".join(doc["explicit"].split()),
                folder=spec.parent,
                keep=tuple(doc.get("keep", ())),
                unchanged=bool(doc.get("unchanged", False)),
                answer=str(doc.get("answer", "")),
                renames=dict(doc.get("renames", {})),
            )
        )
    return tasks


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def snapshot(root: Path) -> dict[str, str]:
    """Every file of the project (outside .git) and a hash of its bytes."""
    files = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/") or not path.is_file():
            continue
        files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def make_repo(task: Task, root: Path) -> dict[str, str]:
    """Lay the task's project out in root (emptied first) as a fresh git repository.

    Returns the snapshot the check compares with.
    """
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(task.folder / "repo", root)
    for source, target in task.renames.items():
        (root / source).rename(root / target)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "Dev")
    _git(root, "config", "commit.gpgsign", "false")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "Start")
    return snapshot(root)


def changed_files(root: Path, before: dict[str, str]) -> list[str]:
    """Files added, changed or removed since the snapshot, leaving out agents' own state."""
    now = snapshot(root)
    new_dirs = {
        rel.split("/", 1)[0]
        for rel in now
        if "/" in rel and rel.startswith(".") and rel.split("/", 1)[0] not in _top_dirs(before)
    }
    changed = []
    for rel in sorted(set(before) | set(now)):
        if before.get(rel) == now.get(rel):
            continue
        if _STATE.search(rel) or rel.split("/", 1)[0] in new_dirs:
            continue  # an agent's cache or history beside the project
        changed.append(rel)
    return changed


def _top_dirs(files: dict[str, str]) -> set[str]:
    return {rel.split("/", 1)[0] for rel in files if "/" in rel}


@dataclass
class Verdict:
    """Whether a run solved its task, and why not."""

    solved: bool
    detail: str
    changed: list[str]


def check(task: Task, root: Path, before: dict[str, str], words: str) -> Verdict:
    """Judge the project after the agent: hidden tests, kept files, changes, the answer.

    words: what the model said in the run (the text of its answers, not its tool calls).
    """
    changed = changed_files(root, before)
    reasons = []
    if task.unchanged and changed:
        reasons.append(f"changed {', '.join(changed[:5])}")
    if task.unchanged and not words.strip():
        reasons.append("the model said nothing")
    touched = [k for k in task.keep if k in changed]
    if touched:
        reasons.append(f"changed the kept {', '.join(touched)}")
    if task.answer and words.strip() and not re.search(task.answer, words):
        reasons.append(f"the answer {task.answer!r} is not in what the model said")
    hidden = sorted((task.folder / "hidden").glob("*.py"))
    for test in hidden:
        shutil.copy(test, root / test.name)
    passed, summary = run_tests(root)
    for test in hidden:
        (root / test.name).unlink(missing_ok=True)
    if not passed:
        reasons.append(summary)
    return Verdict(not reasons, "; ".join(reasons) or summary, changed)


def apply_solution(task: Task, root: Path) -> None:
    """Write the task's reference solution into the project (to check the task itself)."""
    folder = task.folder / "solution"
    if folder.is_dir():
        for path in folder.iterdir():
            shutil.copy(path, root / path.name)


def run_tests(root: Path) -> tuple[bool, str]:
    """The project's tests (and any hidden ones copied in) under pytest."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", "."],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return False, f"the tests did not finish in {CHECK_TIMEOUT} s"
    lines = done.stdout.strip().splitlines() or ["(no output)"]
    return done.returncode == 0, f"pytest: {lines[-1]}"
