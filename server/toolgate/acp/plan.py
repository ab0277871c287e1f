"""The model's stated plan: an `update_plan` tool whose arguments become ACP `plan` updates.

ACP clients draw a plan as a checklist beside the conversation. A plan is what the model says
it will do, so the model says it through a tool, as Codex's `update_plan` does: each call
carries the whole list of steps with their status, and the editor replaces the plan it shows
with it. The call changes nothing and runs at once; it is offered in ACP sessions only,
where something shows it.
"""

from __future__ import annotations

from typing import Any

from acp import helpers
from acp.schema import AgentPlanUpdate, PlanEntry

from toolgate.records import ToolResult
from toolgate.session.assembly import ToolRegistry, tools_with
from toolgate.tools.activity import ActivityContext
from toolgate.tools.schema import Tool

NAME = "update_plan"
STATUSES = ("pending", "in_progress", "completed")
MAX_STEPS = 50

UPDATE_PLAN = Tool(
    name=NAME,
    description=(
        "Show the person your plan for a task of several steps, as a checklist in their "
        "editor. Send the whole list each time, with each step's status; at most one step "
        "in_progress. Update it as steps are done. Skip it for a task of one or two steps."
    ),
    parameters={
        "type": "object",
        "properties": {
            "plan": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_STEPS,
                "items": {
                    "type": "object",
                    "properties": {
                        "step": {"type": "string", "minLength": 1, "maxLength": 500},
                        "status": {"enum": list(STATUSES)},
                        "priority": {"enum": ["high", "medium", "low"]},
                    },
                    "required": ["step", "status"],
                    "additionalProperties": False,
                },
            },
            "explanation": {"type": "string", "maxLength": 2000},
        },
        "required": ["plan"],
        "additionalProperties": False,
    },
    acp_kind="think",
    label="showed the plan",
)


class UpdatePlan:
    """update_plan: nothing to do but say that the plan is shown."""

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Acknowledge the plan (the front end shows it from the call's arguments)."""
        steps = args.get("plan") or []
        done = sum(1 for step in steps if step.get("status") == "completed")
        return ToolResult.ok({"message": f"plan shown: {done} of {len(steps)} steps completed"})


def registry() -> ToolRegistry:
    """The built-in tools and update_plan: what an ACP turn offers before profiles narrow it."""
    return tools_with((UPDATE_PLAN, UpdatePlan()))


def plan_update(arguments: dict[str, Any]) -> AgentPlanUpdate | None:
    """The `plan` update for a call's arguments, or None when they hold no valid step."""
    entries: list[PlanEntry] = []
    for step in arguments.get("plan") or []:
        if not isinstance(step, dict):
            continue
        content, status = step.get("step"), step.get("status")
        if not isinstance(content, str) or not content.strip() or status not in STATUSES:
            continue
        priority = step.get("priority")
        entries.append(
            helpers.plan_entry(
                content.strip(),
                priority=priority if priority in ("high", "medium", "low") else "medium",
                status=status,
            )
        )
    return helpers.update_plan(entries) if entries else None
