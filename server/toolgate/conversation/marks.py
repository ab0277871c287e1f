"""What the editor adds to a conversation beside its turns: plans and the runs that end outside one.

A plan the person asked for, what became of it (approved and the run it started, dropped, a gap
scaffolded), the end of a run that continued no turn (an approved plan's workflow) and an undo
(itself a run that can be undone) are kept as records of the session file, in the order they
happened, so any client that loads the session draws them again where they were.
"""

from __future__ import annotations

from typing import Any

from toolgate.conversation.store import now_iso

PLAN = "plan"
PLAN_DECISION = "plan_decision"
PLAN_SCAFFOLD = "plan_scaffold"
RUN_END = "run_end"
UNDO = "undo"


def plan_record(payload: dict[str, Any]) -> dict[str, Any]:
    """A plan as it was shown: the whole payload the client drew its card from."""
    return {"t": PLAN, "plan_id": str(payload.get("planId")), "plan": payload, "time": now_iso()}


def decision_record(plan_id: str, decision: str, run_id: str | None = None) -> dict[str, Any]:
    """The person approved (`run_id`: the run it started) or dropped a plan."""
    record: dict[str, Any] = {"t": PLAN_DECISION, "plan_id": plan_id, "decision": decision}
    if run_id is not None:
        record["run_id"] = run_id
    record["time"] = now_iso()
    return record


def scaffold_record(plan_id: str, step_id: str, tool: str, folder: str) -> dict[str, Any]:
    """The missing tool of one gap was scaffolded in `folder`."""
    return {
        "t": PLAN_SCAFFOLD,
        "plan_id": plan_id,
        "step_id": step_id,
        "tool": tool,
        "folder": folder,
        "time": now_iso(),
    }


def run_end_record(run_id: str, status: str, reason: str | None) -> dict[str, Any]:
    """The end of a run that continued no turn of the session (a plan's workflow)."""
    return {"t": RUN_END, "run_id": run_id, "status": status, "reason": reason, "time": now_iso()}


def undo_record(undo_run_id: str, undone: str, files: list[str]) -> dict[str, Any]:
    """An undo: the run it undid and the files it put back."""
    return {"t": UNDO, "run_id": undo_run_id, "undoes": undone, "files": files, "time": now_iso()}


class MarkReader:
    """Turns the records above into transcript entries, a plan's later records into its entry."""

    def __init__(self) -> None:
        self._plans: dict[str, dict[str, Any]] = {}

    def entry(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """One record's new transcript entry (None: it changed an earlier one, or is not ours)."""
        kind = record.get("t")
        if kind == PLAN and isinstance(record.get("plan"), dict):
            plan_id = str(record.get("plan_id"))
            entry: dict[str, Any] = {"kind": "plan", "plan": record["plan"], "scaffolded": {}}
            self._plans[plan_id] = entry
            return entry
        if kind == PLAN_DECISION:
            plan = self._plans.get(str(record.get("plan_id")))
            if plan is not None and record.get("decision") in ("approved", "dropped"):
                plan["decision"] = record["decision"]
                if record.get("run_id"):
                    plan["runId"] = record["run_id"]
            return None
        if kind == PLAN_SCAFFOLD:
            plan = self._plans.get(str(record.get("plan_id")))
            if plan is not None and record.get("step_id"):
                plan["scaffolded"][str(record["step_id"])] = {
                    "tool": str(record.get("tool") or ""),
                    "folder": str(record.get("folder") or ""),
                }
            return None
        if kind == RUN_END:
            return run_entry(record)
        if kind == UNDO:
            entry = run_entry({**record, "status": "completed"})
            entry["undoes"] = str(record.get("undoes") or "")
            entry["files"] = [str(f) for f in record.get("files") or []]
            return entry
        return None


def run_entry(record: dict[str, Any]) -> dict[str, Any]:
    """The end of a run as a client draws it (its undo is filled in by whoever knows the disk)."""
    return {
        "kind": "run",
        "runId": str(record.get("run_id") or ""),
        "status": str(record.get("status") or "completed"),
        "reason": record.get("reason"),
        "time": record.get("time"),
    }
