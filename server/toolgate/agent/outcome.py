"""How a run ended, and the judgement of it: the statuses, the stop, the streaks, the verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolgate.agent.account import last_test_run_not_run
from toolgate.agent.gate import GateOutcome
from toolgate.agent.text_in_native import never_ran
from toolgate.calls import CallParseError
from toolgate.records import ToolCall
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import CHANGE

COMPLETED = "completed"
FAILED = "failed"
BLOCKED = "blocked_by_policy"
LIMIT = "limit_reached"
CANCELLED = "cancelled"
INCOMPLETE = "incomplete"


@dataclass
class RunOutcome:
    """How a run ended."""

    run_id: str
    status: str
    reason: str | None = None
    answer: str | None = None
    log_path: str | None = None
    # Why the model's last answer ended (`stop`, `length`, `content_filter`…), as it said.
    finish_reason: str | None = None
    # The model's refusal, when its last answer was one (OpenAI's `refusal` field).
    refusal: str | None = None


class Stop(Exception):
    """Ends a run before the model does, with the status and the reason it ends with."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def refused(refusal: str, finish_reason: str | None) -> str | None:
    """Why a turn that ended the run is a refusal (None when it is not one).

    The model's own refusal (OpenAI streams it in `refusal`, often with finish reason `stop`)
    and an answer the endpoint's content filter stopped end the run the same way.
    """
    if refusal:
        first = refusal.strip().splitlines()[0] if refusal.strip() else ""
        said = first[:200] + ("…" if len(first) > 200 else "")
        return f"the model refused: {said}" if said else "the model refused"
    if finish_reason == "content_filter":
        return "the endpoint's content filter stopped the answer"
    return None


@dataclass
class Streaks:
    """Turns in a row that got nothing done: every call denied by the policy, or every one failed.

    `count` ends the run once either streak is longer than `max_tool_retries`.
    """

    max_tool_retries: int
    denied: int = 0
    failed: int = 0

    def count(
        self, outcomes: Sequence[tuple[ToolCall, GateOutcome]], errors: Sequence[CallParseError]
    ) -> None:
        """Count one turn that made calls (or tried to); raise Stop once a streak is too long."""
        if outcomes and all(
            o.decision == "denied" and o.result.error and "policy" in o.result.error
            for _, o in outcomes
        ):
            self.denied += 1
        else:
            self.denied = 0
        failed = (not outcomes and errors) or (
            outcomes and all(not o.result.success for _, o in outcomes)
        )
        self.failed = self.failed + 1 if failed else 0
        if self.denied > self.max_tool_retries:
            raise Stop(BLOCKED, "the model kept asking for calls the policy denies")
        if self.failed > self.max_tool_retries:
            raise Stop(
                FAILED,
                f"{self.failed} turns in a row had only failed or invalid calls "
                f"(max_tool_retries = {self.max_tool_retries})",
            )


def judge(
    steps: Sequence[Mapping[str, Any]],
    events: list[dict[str, Any]],
    answer: str | None,
    registry: ToolRegistry,
) -> tuple[str, str | None]:
    """How a run the model ended went: `completed` only when it did what it says it did.

    An empty answer with no call at all is what a non-API page answering 200 gives; a run
    whose last call was written as text, whose last change or asked-for command was refused,
    whose last change failed, or whose last test run did not run, ends with words that may
    claim what never happened.
    """
    calls = [c for step in steps for c in step["calls"]]
    if not calls and not (answer or "").strip():
        return FAILED, (
            "the model sent an empty answer and no tool call; check that the base URL is an "
            "OpenAI-compatible API (it should end in /v1)"
        )
    unran = never_ran(calls)  # the last call was written as text (agent/text_in_native.py)
    if unran:
        return INCOMPLETE, unran
    acts = [
        c for c in calls if c.get("decision") in ("approved", "rejected") or _changes(registry, c)
    ]
    if acts and acts[-1]["decision"] == "rejected":
        rejected = sum(1 for c in acts if c["decision"] == "rejected")
        return INCOMPLETE, (
            f"{rejected} gated call(s) the model made were refused and nothing landed after "
            "the last of them; its answer may say otherwise"
        )
    if acts and not (acts[-1].get("result") or {}).get("success"):
        # Failed before anybody saw it (no match, bad arguments, a policy's deny) or when
        # applied: a script reading exit 0 would trust a change that is not there.
        last = acts[-1]
        error = (last.get("result") or {}).get("error") or "it failed"
        return INCOMPLETE, (
            f"the last change the model asked for did not land ({last.get('name')}: "
            f"{error}); its answer may say otherwise"
        )
    untested = last_test_run_not_run(events)
    if untested:
        # "Tests are green" after tests that never ran: not a finished task either.
        return INCOMPLETE, (
            f"the last test run did not run ({untested}); its answer may say otherwise"
        )
    return COMPLETED, None


def _changes(registry: ToolRegistry, logged: Mapping[str, Any]) -> bool:
    """Whether a logged call is to a tool that changes the workspace."""
    tool = registry.get(str(logged.get("name") or ""))
    return tool is not None and tool.kind == CHANGE
