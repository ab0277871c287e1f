"""Evaluate the embedded local model end to end: small tasks through `toolgate run --approve auto`.

Each task gets a fresh git repository with a tiny project, runs `python -m toolgate run` as a
subprocess with no endpoint configured (so the embedded model starts), then checks the repository
itself: the file exists with the expected content, the tests pass under pytest, a new commit
exists. Steps, tool calls and parse errors come from the run log in `.toolgate/runs/`.

    .venv/bin/python benchmarks/local_model_eval.py [--repeat N] [--only NAME ...] [--key NAME]

Writes benchmarks/results/local_model_eval.json and prints a table. Without --key the file is
replaced; with --key NAME the run is stored under that key and the file's other keys are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.cli.demo import git_project

RESULTS = Path(__file__).resolve().parent / "results" / "local_model_eval.json"
MAX_STEPS = 8
RUN_TIMEOUT_SECONDS = 900

CALC_OK = "def add(a, b):\n    return a + b\n"
CALC_BROKEN = "def add(a, b):\n    return a - b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
README = "# calc\n\nA tiny calculator.\n"
HELLO = "print('hello')\n"


@dataclass
class Task:
    """One evaluation task: the project it starts from, the words, and the check."""

    name: str
    kind: str  # create, edit, test, fix, commit
    style: str  # explicit (step by step) or natural
    prompt: str
    files: dict[str, str]
    check: Callable[[Path, dict[str, Any]], tuple[bool, str]]
    uncommitted: dict[str, str] = field(default_factory=dict)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def make_repo(task: Task) -> Path:
    """A fresh git repository with the task's files committed, plus its uncommitted files."""
    root = git_project(task.files, prefix=f"tg-eval-{task.name}-", message="Start")
    for name, text in task.uncommitted.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _read(root: Path, name: str) -> str | None:
    path = root / name
    return path.read_text(encoding="utf-8") if path.is_file() else None


def pytest_passes(root: Path) -> tuple[bool, str]:
    """Run the project's tests with pytest, as a person would."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    return done.returncode == 0, f"pytest: {last}"


def executed_calls(log: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls that were parsed and run (or approved), in order."""
    return [
        c
        for step in log.get("steps", [])
        for c in step.get("calls", [])
        if c.get("name") and c.get("decision") not in ("denied", "rejected")
    ]


def _ran_tests(log: dict[str, Any]) -> bool:
    for call in executed_calls(log):
        if call["name"] == "run_tests":
            return True
        if call["name"] == "run_command" and "pytest" in str(call.get("arguments", {})):
            return True
    return False


def check_file(name: str, *needles: str) -> Callable[[Path, dict[str, Any]], tuple[bool, str]]:
    """Success when the file exists and contains every needle."""

    def check(root: Path, log: dict[str, Any]) -> tuple[bool, str]:
        text = _read(root, name)
        if text is None:
            return False, f"{name} missing"
        missing = [n for n in needles if n not in text]
        return (not missing, f"{name} lacks {missing}" if missing else f"{name} ok")

    return check


def check_sub(root: Path, log: dict[str, Any]) -> tuple[bool, str]:
    """calc.sub exists and subtracts; calc.add still adds."""
    code = "import calc; assert calc.sub(5, 3) == 2; assert calc.add(2, 3) == 5"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60
    )
    tail = (done.stderr.strip().splitlines() or ["ok"])[-1]
    return done.returncode == 0, f"calc.sub: {tail}"


def check_ran_tests(root: Path, log: dict[str, Any]) -> tuple[bool, str]:
    """The agent ran the test suite (run_tests, or run_command with pytest)."""
    ran = _ran_tests(log)
    return ran, "tests were run" if ran else "no test run among the calls"


def check_fixed(root: Path, log: dict[str, Any]) -> tuple[bool, str]:
    """The tests pass and the test file was not weakened."""
    if _read(root, "test_calc.py") != TEST_CALC:
        return False, "test_calc.py was changed"
    return pytest_passes(root)


def check_committed(name: str) -> Callable[[Path, dict[str, Any]], tuple[bool, str]]:
    """Success when a new commit exists and changes the file."""

    def check(root: Path, log: dict[str, Any]) -> tuple[bool, str]:
        count = int(_git(root, "rev-list", "--count", "HEAD").strip())
        if count < 2:
            return False, "no new commit"
        changed = _git(root, "diff", "--name-only", "HEAD~1", "HEAD").split()
        if name not in changed:
            return False, f"the new commit does not change {name}"
        message = _git(root, "log", "-1", "--format=%s").strip()
        return True, f"committed: {message!r}"

    return check


BASE = {"README.md": README, "calc.py": CALC_OK, "test_calc.py": TEST_CALC}
BROKEN = {**BASE, "calc.py": CALC_BROKEN}

TASKS = [
    Task(
        "create-explicit",
        "create",
        "explicit",
        'Create the file hello.py. Call write_file with path "hello.py" and content '
        "\"print('hello')\\n\". One tool block only.",
        BASE,
        check_file("hello.py", "print(", "hello"),
    ),
    Task(
        "create-natural",
        "create",
        "natural",
        "Create a file NOTES.md containing the line 'Project notes'.",
        BASE,
        check_file("NOTES.md", "Project notes"),
    ),
    Task(
        "edit-explicit",
        "edit",
        "explicit",
        'Step 1: call read_file with path "README.md". Step 2: call edit_file with path '
        '"README.md", search "# calc" and replace "# calculator". One tool block per answer.',
        BASE,
        check_file("README.md", "# calculator"),
    ),
    Task(
        "edit-natural",
        "edit",
        "natural",
        "Read calc.py and add a function sub(a, b) that returns a - b.",
        BASE,
        check_sub,
    ),
    Task(
        "test-explicit",
        "test",
        "explicit",
        "Run the tests: call run_tests. One tool block only.",
        BASE,
        check_ran_tests,
    ),
    Task(
        "test-natural",
        "test",
        "natural",
        "Run the tests and tell me whether they pass.",
        BASE,
        check_ran_tests,
    ),
    Task(
        "fix-explicit",
        "fix",
        "explicit",
        "The test fails because add() in calc.py returns a - b. Step 1: call edit_file with "
        'path "calc.py", search "return a - b" and replace "return a + b". '
        "Step 2: call run_tests. One tool block per answer.",
        BROKEN,
        check_fixed,
    ),
    Task(
        "fix-natural",
        "fix",
        "natural",
        "Fix the failing test in test_calc.py.",
        BROKEN,
        check_fixed,
    ),
    Task(
        "commit-explicit",
        "commit",
        "explicit",
        'Step 1: call git_add with files ["hello.py"]. Step 2: call git_commit with message '
        '"Add hello.py". One tool block per answer.',
        BASE,
        check_committed("hello.py"),
        uncommitted={"hello.py": HELLO},
    ),
    Task(
        "commit-natural",
        "commit",
        "natural",
        "Commit the new file hello.py with the message 'Add hello.py'.",
        BASE,
        check_committed("hello.py"),
        uncommitted={"hello.py": HELLO},
    ),
    Task(
        "fix-commit-explicit",
        "fix+commit",
        "explicit",
        "The test fails because add() in calc.py returns a - b. Step 1: call edit_file with "
        'path "calc.py", search "return a - b" and replace "return a + b". '
        'Step 2: call run_tests. Step 3: call git_add with files ["calc.py"]. '
        'Step 4: call git_commit with message "Fix add". One tool block per answer.',
        BROKEN,
        lambda root, log: _both(check_fixed(root, log), check_committed("calc.py")(root, log)),
    ),
]


def _both(first: tuple[bool, str], second: tuple[bool, str]) -> tuple[bool, str]:
    return first[0] and second[0], f"{first[1]}; {second[1]}"


def load_log(root: Path) -> dict[str, Any]:
    """The run's log, or an empty record when the run wrote none."""
    logs = sorted((root / ".toolgate" / "runs").glob("*.json"))
    return json.loads(logs[-1].read_text(encoding="utf-8")) if logs else {}


def summarize_log(log: dict[str, Any]) -> dict[str, Any]:
    """Steps, calls and parse errors from a run log."""
    steps = log.get("steps", [])
    calls = [c for s in steps for c in s.get("calls", []) if c.get("name")]
    unread = [c.get("error") for s in steps for c in s.get("calls", []) if not c.get("name")]
    # A run ended by the timeout has no metrics; its steps still hold each unreadable call.
    parse_errors = log.get("metrics", {}).get("tool_call_parse_errors_total", len(unread))
    return {
        "status": log.get("status"),
        "reason": log.get("reason"),
        "mode": log.get("tool_calling_mode"),
        "steps": len(steps),
        "llm_calls": log.get("metrics", {}).get("llm_calls_total"),
        "tool_calls": len(calls),
        "calls": [
            {
                "name": c["name"],
                "arguments": c.get("arguments"),
                "decision": c.get("decision"),
                "error": c.get("error"),
            }
            for c in calls
        ],
        "parse_errors": parse_errors,
        "parse_error_messages": unread,
        "answer": log.get("answer"),
    }


# The settings `Endpoint.small_model` brings (compact prompt, no sampling, a token cap), given
# through the workspace's config file: measures them on an engine that does not set them itself.
SMALL_SETTINGS = """[model]
temperature = 0.0
max_tokens = 768

[tool_calling]
compact_prompt = true
"""


def engine_info() -> dict[str, str]:
    """Which toolgate the runs import, and the repository's commit (the engine changes often)."""
    where = subprocess.run(
        [sys.executable, "-c", "import toolgate; print(toolgate.__file__)"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=Path(__file__).resolve().parent,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return {"toolgate": where, "repository_head": head}


def run_task(
    task: Task,
    keep: bool,
    small_settings: bool = False,
    timeout: float = RUN_TIMEOUT_SECONDS,
    grammar: bool = True,
) -> dict[str, Any]:
    """Run one task in a fresh repository and check the outcome."""
    root = make_repo(task)
    if small_settings:
        (root / ".toolgate").mkdir(exist_ok=True)
        (root / ".toolgate" / "config.toml").write_text(SMALL_SETTINGS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    env["TOOLGATE_LOCAL_GRAMMAR"] = "on" if grammar else "off"
    load_before = os.getloadavg()
    start = time.monotonic()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolgate",
                "run",
                task.prompt,
                "--workspace",
                str(root),
                "--approve",
                "auto",
                "--max-steps",
                str(MAX_STEPS),
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
        exit_code: int | None = done.returncode
        stderr_tail = done.stderr[-1500:]
    except subprocess.TimeoutExpired:
        exit_code, stderr_tail = None, f"timed out after {timeout:.0f} s"
    seconds = time.monotonic() - start
    log = load_log(root)
    ok, detail = task.check(root, log)
    record = {
        "task": task.name,
        "kind": task.kind,
        "style": task.style,
        "prompt": task.prompt,
        "success": ok,
        "check": detail,
        "wall_seconds": round(seconds, 1),
        "exit_code": exit_code,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        **summarize_log(log),
        "stderr_tail": stderr_tail,
    }
    if keep:
        record["workspace"] = str(root)
    else:
        shutil.rmtree(root, ignore_errors=True)
    return record


def table(records: list[dict[str, Any]]) -> str:
    """A plain-text table of the results."""
    head = f"{'task':<17} {'ok':<3} {'time s':>7} {'steps':>5} {'calls':>5} {'parse':>5}  status"
    lines = [head, "-" * len(head)]
    for r in records:
        lines.append(
            f"{r['task']:<17} {'yes' if r['success'] else 'no':<3} {r['wall_seconds']:>7.1f} "
            f"{r['steps']:>5} {r['tool_calls']:>5} {r['parse_errors']:>5}  "
            f"{r['status']} — {r['check']}"
        )
    wins = sum(r["success"] for r in records)
    mean = sum(r["wall_seconds"] for r in records) / max(len(records), 1)
    lines.append(f"success {wins}/{len(records)}, mean {mean:.0f} s per task")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the tasks, print the table, write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", nargs="*", help="task names to run")
    parser.add_argument("--keep", action="store_true", help="keep the workspaces")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--timeout", type=float, default=RUN_TIMEOUT_SECONDS, help="seconds per task"
    )
    parser.add_argument(
        "--engine-label", default="", help="the engine commit, when run from a snapshot"
    )
    parser.add_argument(
        "--key", default="", help="store the run under this key, keeping the file's other keys"
    )
    parser.add_argument(
        "--small-settings",
        action="store_true",
        help="compact prompt, temperature 0, max_tokens 768 through .toolgate/config.toml",
    )
    parser.add_argument(
        "--no-grammar",
        action="store_true",
        help="let the model write freely (TOOLGATE_LOCAL_GRAMMAR=off) instead of the tool grammar",
    )
    args = parser.parse_args(argv)
    tasks = [t for t in TASKS if not args.only or t.name in args.only]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    records: list[dict[str, Any]] = []
    engine = {**engine_info(), "label": args.engine_label}
    for repetition in range(args.repeat):
        for task in tasks:
            record = run_task(
                task, args.keep, args.small_settings, args.timeout, grammar=not args.no_grammar
            )
            record["repetition"] = repetition + 1
            records.append(record)
            print(
                f"{task.name}: {'ok' if record['success'] else 'FAILED'} "
                f"in {record['wall_seconds']} s ({record['check']})",
                flush=True,
            )
            # Written after every task, so an interrupted evaluation still leaves its figures.
            args.out.parent.mkdir(parents=True, exist_ok=True)
            run = {
                "started_at": started,
                "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "machine": {
                    "cores": os.cpu_count(),
                    "python": platform.python_version(),
                    "platform": platform.platform(),
                },
                "engine": engine,
                "max_steps": MAX_STEPS,
                "tool_grammar": not args.no_grammar,
                "timeout_seconds": args.timeout,
                "small_settings": SMALL_SETTINGS if args.small_settings else None,
                "repeat": args.repeat,
                "success": sum(r["success"] for r in records),
                "runs": len(records),
                "records": records,
            }
            if args.key:
                earlier = (
                    json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
                )
                run = {**earlier, args.key: run}
            args.out.write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
    print(table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
