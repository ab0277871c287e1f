"""The agent's jobs as tools another agent calls: implement, review, test, refactor, document.

Each is a Toolgate run through the session service (its own session, run log and checkpoint,
the gate between the model and the disk) and returns a `ToolResult`. Front ends (the MCP
server) list `AgentJobs.specs()` and call `AgentJobs.call()`, lending an `Ask` for approvals
and a progress callback; nothing here knows which protocol they speak.
"""

from __future__ import annotations

from pathlib import Path

from toolgate.agent_tools.approvals import APPROVE_CHOICES, Answer, Ask
from toolgate.agent_tools.documentation import generate_documentation
from toolgate.agent_tools.implement import implement_code
from toolgate.agent_tools.jobs import AgentJobs, CallContext
from toolgate.agent_tools.refactor import refactor_code
from toolgate.agent_tools.review import review_code
from toolgate.agent_tools.specs import SPECS, AgentToolSpec
from toolgate.agent_tools.testrun import run_tests
from toolgate.session import SessionService

__all__ = [
    "APPROVE_CHOICES",
    "SPECS",
    "AgentJobs",
    "AgentToolSpec",
    "Answer",
    "Ask",
    "CallContext",
    "agent_jobs",
]


def agent_jobs(root: Path, service: SessionService, approve: str = "deny") -> AgentJobs:
    """Every agent tool of the workspace, ready to list and call."""
    jobs = AgentJobs(root, service, approve)
    jobs.register("implement_code", implement_code)
    jobs.register("review_code", review_code)
    jobs.register("run_tests", run_tests)
    jobs.register("refactor_code", refactor_code)
    jobs.register("generate_documentation", generate_documentation)
    return jobs
