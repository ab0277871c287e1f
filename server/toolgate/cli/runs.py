"""`toolgate runs [list] | show RUN_ID`: the run logs of a workspace, as a person reads them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from toolgate.cli import flags
from toolgate.cli.workspace import workspace_root

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(sub: Any) -> None:
    """Register `runs list` and `runs show RUN_ID`."""
    runs = sub.add_parser("runs", help="list the workspace's runs or show one run's log")
    # Without a subcommand: the list.
    actions = runs.add_subparsers(dest="runs_command")
    listing = actions.add_parser("list", help="each run: id, start, status, steps, task")
    show = actions.add_parser("show", help="a run's task, steps, tool calls and account")
    show.add_argument("run_id", metavar="RUN_ID")
    flags.listing(runs, (listing, show))
    runs.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Do one `runs` subcommand."""
    from toolgate.session.run_logs import RunLogError, read_run_log, run_logs

    root = workspace_root(args.workspace)
    if root is None:
        return EXIT_USAGE
    if args.runs_command in (None, "list"):
        logs = run_logs(root)
        if args.json:
            listed = [{k: doc.get(k) for k in _LISTED} for doc in logs]
            sys.stdout.write(json.dumps(listed, ensure_ascii=False, indent=2) + "\n")
        for doc in [] if args.json else logs:
            print(_list_line(doc))
        if not logs:
            print("no runs in this workspace", file=sys.stderr)
        return EXIT_OK
    try:
        doc = read_run_log(root, args.run_id)
    except RunLogError as exc:
        print(f"toolgate: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(run_lines(doc, root)) + "\n")
    return EXIT_OK


_LISTED = ("run_id", "started_at", "status", "task", "model")


def _list_line(doc: dict[str, Any]) -> str:
    task = " ".join(str(doc.get("task") or "").split())
    task = task if len(task) <= 60 else task[:59] + "…"
    started = str(doc.get("started_at") or "")[:19].replace("T", " ")
    steps = len(doc.get("steps") or [])
    noun = "step " if steps == 1 else "steps"
    return f"{doc.get('run_id')}  {started}  {doc.get('status', '?'):<17} {steps:3} {noun}  {task}"


def run_lines(doc: dict[str, Any], root: Path) -> list[str]:
    """A run log as a person reads it: the task, each step and call, the account, the end."""
    from toolgate.cli.terminal import brief_args
    from toolgate.session.run_logs import account_lines, account_of

    lines = [
        f"run {doc.get('run_id')}",
        f"task: {doc.get('task')}",
        f"model: {doc.get('model')} at {doc.get('base_url')} "
        f"({doc.get('tool_calling_mode')} tool calling), profile {doc.get('profile')}",
        f"started {doc.get('started_at')}, finished {doc.get('finished_at') or '(not yet)'}",
    ]
    for step in doc["steps"]:
        usage = step.get("usage") or {}
        used = f" · {usage['total_tokens']} tokens" if usage.get("total_tokens") else ""
        lines.append(f"\nstep {step.get('step')}{used}")
        text = str(step.get("assistant_text") or "").strip()
        if text:
            lines += [f"  {line}" for line in text.splitlines()]
        for call in step.get("calls") or []:
            lines.append(f"  → {call.get('name')} {brief_args(call.get('arguments') or {})}")
            lines.append(f"    {_outcome(call)}")
    answer = str(doc.get("answer") or "").strip()
    if answer and not any(
        str(s.get("assistant_text") or "").strip() == answer for s in doc["steps"]
    ):
        lines += ["", "answer:"] + [f"  {line}" for line in answer.splitlines()]
    lines.append("")
    lines += [f"  {line}" for line in account_lines(account_of(doc, root))]
    reason = f" — {doc['reason']}" if doc.get("reason") else ""
    lines.append(f"status: {doc.get('status')}{reason}")
    return lines


def _outcome(call: dict[str, Any]) -> str:
    """What became of a call: who decided, and what it gave back."""
    from toolgate.session.run_logs import decision_words

    result = call.get("result") or {}
    decision = decision_words(str(call.get("decision")), result.get("error"))
    if result.get("success"):
        data = result.get("data")
        said = data.get("message") if isinstance(data, dict) else None
        return f"✓ {decision}" + (f" — {said}" if said else "")
    return f"✗ {decision} — {result.get('error') or 'failed'}"
