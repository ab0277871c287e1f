"""The end-of-run account: what a run changed, ran and tested, told the same way everywhere.

Built from the run log's own events and calls, so the CLI, the run log and the LSP's
`run_finished` carry one account and none of them keeps a second tally.
"""

from __future__ import annotations

from typing import Any

from toolgate.agent.done_words import done_words
from toolgate.agent.events import (
    LLM_USAGE,
    PROPOSAL_CREATED,
    PROPOSAL_RESOLVED,
    RULES_USED,
    RUN_STARTED,
    TESTS_FINISHED,
    logged_type,
)
from toolgate.review.diff import hunk_line_counts
from toolgate.review.problems import from_json as problems_from_json
from toolgate.review.problems import problems_note
from toolgate.tools.builtins import builtin_registry
from toolgate.tools.registry import ToolRegistry

_LANDED = ("accepted", "partially_accepted")


def decision_words(decision: str, error: str | None = None, rule: str | None = None) -> str:
    """How a call was decided, in words a person does not misread.

    The gate logs a call that failed before anybody saw it (no match, bad arguments) as
    `denied`, like one a setting turned away; only the second was refused by anything.
    """
    if rule:  # a setting refused it, never a person; the error names the setting
        return "refused by policy" if "policy" in rule else f"refused: {rule}"
    if decision == "denied":
        return "refused by policy" if "policy" in (error or "") else "failed"
    return decision


def last_test_run_not_run(events: list[dict[str, Any]]) -> str | None:
    """Why the run's last test run did not run its tests (None when it did, or none ran)."""
    finished = [e for e in events if logged_type(e) == TESTS_FINISHED]
    return str(finished[-1]["not_run"]) if finished and finished[-1].get("not_run") else None


def build_account(
    events: list[dict[str, Any]],
    steps: list[dict[str, Any]],
    seconds: float,
    run_log: str,
    tools: ToolRegistry | None = None,
) -> dict[str, Any]:
    """The account of one run from its logged events and steps, and the run's tools.

    Without `tools` (a log read back), its calls are taken for the built-in tools' calls.
    """
    tools = tools or builtin_registry()
    events = [{**e, "type": logged_type(e)} for e in events]
    created = {e["proposal_id"]: e for e in events if e.get("type") == PROPOSAL_CREATED}
    files: dict[str, dict[str, int]] = {}
    proposals = {"accepted": 0, "partly_accepted": 0, "rejected": 0}
    for event in events:
        if event.get("type") != PROPOSAL_RESOLVED:
            continue
        status = event.get("status")
        if status == "accepted":
            proposals["accepted"] += 1
        elif status == "partially_accepted":
            proposals["partly_accepted"] += 1
        else:
            proposals["rejected"] += 1
        origin = created.get(event.get("proposal_id"))
        if status not in _LANDED or origin is None:
            continue
        counts = hunk_line_counts(str(origin.get("diff", "")))
        applied = event.get("hunks_applied")
        chosen = range(len(counts)) if status == "accepted" or applied is None else applied
        entry = files.setdefault(str(origin.get("path")), {"added": 0, "removed": 0})
        for index in chosen:
            if 0 <= index < len(counts):
                entry["added"] += counts[index][0]
                entry["removed"] += counts[index][1]
    commands = [
        str(call.get("arguments", {}).get("command", ""))
        for step in steps
        for call in step.get("calls", [])
        if _runs_commands(tools, call) and call.get("decision") in ("auto", "approved")
    ]
    tests = None
    finished = [e for e in events if e.get("type") == TESTS_FINISHED]
    if finished:
        last = finished[-1]
        summary = last.get("summary", {})
        failed = int(summary.get("failed", 0)) + int(summary.get("errors", 0))
        tests = {
            "passed": int(summary.get("passed", 0)),
            "failed": failed,
            "outcome": "failed" if failed else "passed",
            "failing": list(last.get("failing", [])),
        }
        if last.get("not_run"):  # no results, nothing collected, timed out: never a pass
            tests.update(outcome="not_run", reason=str(last["not_run"]))
    account = {
        "files": [{"path": path, **counts} for path, counts in files.items()],
        "proposals": proposals,
        "commands": commands,
        "tests": tests,
        "tokens": _tokens(events),
        "seconds": round(seconds, 1),
        "run_log": run_log,
        "did": done_words(events, steps, tools),
        "rules": rules_used(events),
    }
    caused = [
        p.to_json()
        for e in events
        if e.get("type") == PROPOSAL_RESOLVED
        for p in problems_from_json(e.get("problems"))
    ]
    if caused:  # told only when the editor's other servers reported some
        account["problems"] = caused
    return account


def rules_used(events: list[dict[str, Any]]) -> list[str]:
    """The rules files the run used: the system prompt's, then those attached to results."""
    used: list[str] = []
    for event in events:
        if logged_type(event) in (RUN_STARTED, RULES_USED):
            used.extend(str(r) for r in event.get("rules") or [] if str(r) not in used)
    return used


def _runs_commands(tools: ToolRegistry, call: dict[str, Any]) -> bool:
    """Whether a logged call ran a command line of the model's (not a test run, not a tool)."""
    tool = tools.get(str(call.get("name") or ""))
    return tool is not None and "shell.run" in tool.capabilities


def _tokens(events: list[dict[str, Any]]) -> dict[str, int] | None:
    """The tokens the endpoint said the run's requests used; None when it never said."""
    used = [e for e in events if e.get("type") == LLM_USAGE]
    if not used:
        return None
    totals = {"prompt": 0, "completion": 0, "total": 0}
    for event in used:
        prompt = int(event.get("prompt_tokens") or 0)
        completion = int(event.get("completion_tokens") or 0)
        totals["prompt"] += prompt
        totals["completion"] += completion
        totals["total"] += int(event.get("total_tokens") or prompt + completion)
    cached = [int(e["cached_tokens"]) for e in used if isinstance(e.get("cached_tokens"), int)]
    if cached:  # only where the endpoint says: no count is not "nothing cached"
        totals["cached"] = sum(cached)
    return totals


def account_lines(account: dict[str, Any]) -> list[str]:
    """The account as a person reads it, a few short lines."""
    lines = []
    files = account.get("files") or []
    if files:
        changed = ", ".join(f"{f['path']} +{f['added']} -{f['removed']}" for f in files)
        lines.append(f"changed: {changed}")
    else:
        lines.append("changed: no files")
    p = account.get("proposals") or {}
    if any(p.values()):
        lines.append(
            f"proposals: {p.get('accepted', 0)} accepted, {p.get('partly_accepted', 0)} partly "
            f"accepted, {p.get('rejected', 0)} rejected"
        )
    caused = problems_note(
        problems_from_json(account.get("problems")), "new problems after its changes: "
    )
    if caused:
        lines.append(caused)
    if account.get("did"):
        lines.append("done: " + ", ".join(account["did"]))
    if account.get("rules"):
        lines.append("rules: " + ", ".join(account["rules"]))
    if account.get("commands"):
        lines.append("commands: " + "; ".join(account["commands"]))
    tests = account.get("tests")
    if tests and tests.get("outcome") == "not_run":
        lines.append(f"tests did not run: {tests.get('reason')}")
    elif tests:
        text = f"tests: {tests['outcome']} ({tests['passed']} passed, {tests['failed']} failed)"
        if tests.get("failing"):
            text += " — failing: " + ", ".join(tests["failing"])
        lines.append(text)
    tokens = account.get("tokens")
    if isinstance(tokens, dict):
        cached = f", {tokens['cached']} of the prompt cached" if "cached" in tokens else ""
        lines.append(
            f"tokens used: {tokens.get('total', 0)} ({tokens.get('prompt', 0)} prompt, "
            f"{tokens.get('completion', 0)} completion{cached})"
        )
    lines.append(f"time: {account.get('seconds', 0):.1f} s; run log: {account.get('run_log')}")
    return lines
