"""A plan as a front end keeps and offers it: its story in the session, the tool a gap asks for.

The plan itself is kept in `.toolgate/plans/`. Its card, the person's decision, a tool made for
one of its steps and how its run ended are kept in the session's conversation too, so a client
that loads the session again draws the card as it was. A session that cannot take a record is
said, never raised: the plan and its run do not depend on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from toolgate.conversation.marks import (
    decision_record,
    plan_record,
    run_end_record,
    scaffold_record,
)
from toolgate.conversation.store import SessionError
from toolgate.planning.gaps import scaffoldable


class Marking(Protocol):
    """The part of the session service that keeps a record in a session."""

    def mark(
        self, session_id: str | None, record: dict[str, Any], *, create: bool = False
    ) -> str | None:
        """Append a record to a session; the session written to."""
        ...


@dataclass
class PlanMarks:
    """A plan's records, each kept in the given session (else the current one)."""

    service: Marking
    say: Callable[[str], None]

    def plan(self, session_id: str | None, payload: dict[str, Any]) -> str | None:
        """The plan's card; a workspace without a session gets one for it."""
        return self._keep(session_id, plan_record(payload), create=True)

    def decision(
        self, session_id: str | None, plan_id: str, decision: str, run_id: str | None = None
    ) -> str | None:
        """The person's decision on a plan: approved (with the run it started) or dropped."""
        return self._keep(session_id, decision_record(plan_id, decision, run_id))

    def scaffolded(
        self, session_id: str | None, plan_id: str, step_id: str, tool: str, folder: str
    ) -> str | None:
        """A tool made for one of the plan's steps, in that folder."""
        return self._keep(session_id, scaffold_record(plan_id, step_id, tool, folder))

    def run_end(
        self, session_id: str | None, run_id: str, status: str, reason: str | None
    ) -> str | None:
        """How the plan's run ended."""
        return self._keep(session_id, run_end_record(run_id, status, reason))

    def _keep(
        self, session_id: str | None, record: dict[str, Any], *, create: bool = False
    ) -> str | None:
        try:
            return self.service.mark(session_id, record, create=create)
        except (SessionError, OSError) as exc:
            self.say(f"could not keep the plan in the conversation: {exc}")
            return None


def gap_scaffold(gap: Mapping[str, Any]) -> dict[str, Any] | None:
    """The arguments that make the tool a gap asks for: name, capability, inputs, outputs.

    None when no new tool can fill the gap, or the gap (read from a file) is not one.
    """
    capability = gap.get("missing_capability")
    if not isinstance(capability, str) or not scaffoldable(str(gap.get("reason"))):
        return None
    return {
        "name": str(gap.get("proposed_tool_name") or capability.replace(".", "_")),
        "capability": capability,
        "inputs": list((gap.get("proposed_input_schema") or {}).get("properties", {})),
        "outputs": list((gap.get("proposed_output_schema") or {}).get("properties", {})),
    }
