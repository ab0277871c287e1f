"""The policy names the setting that denies a call, as a person would write it."""

from __future__ import annotations

import pytest

from toolgate.agent.policy import Decision, Policy
from toolgate.tools.schema import GIT, RUN, Tool

COMMIT = Tool("git_commit", "commit", kind=GIT, asks=True, executes=True)


@pytest.mark.parametrize(
    ("policy", "tool", "rule"),
    [
        (Policy(deny_tools=["git_commit"]), COMMIT, "policy.deny_tools lists git_commit"),
        (Policy(allow_tools=["read_file"]), COMMIT, "policy.allow_tools does not list git_commit"),
        (
            Policy(approvals={"git_commit": Decision.DENY}),
            COMMIT,
            'policy.approvals.git_commit = "deny"',
        ),
        (
            Policy(),
            Tool("shout", "shout", kind=RUN, gate="deny"),
            'the policy default for shout ("deny")',
        ),
    ],
)
def test_each_denial_names_its_rule(policy: Policy, tool: Tool, rule: str) -> None:
    assert policy.decide(tool) == Decision.DENY
    assert policy.rule(tool) == rule
