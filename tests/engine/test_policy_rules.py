"""The policy names the setting that denies a call, as a person would write it."""

from __future__ import annotations

import pytest

from toolgate.agent.policy import ASK, AUTO_EDITS, READ_ONLY, Decision, Policy, policy_for
from toolgate.config import Config, PolicyConfig
from toolgate.tools.schema import CHANGE, GIT, OTHER, READ, RUN, Tool

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


# The approval modes decide by what a tool does, whatever its name and wherever it comes from.
READ_TOOL = Tool("peek", "a read", kind=READ)
MCP_READ = Tool("srv__look", "an MCP read", kind=READ, asks=True, executes=True)
EDIT = Tool("edit_file", "a diff", kind=CHANGE, asks=True)
PROGRAM_EDIT = Tool("fmt", "a manifest formatter", kind=CHANGE, asks=True, executes=True)
TESTS = Tool("run_tests", "tests", kind=RUN, executes=True)
UNSAID = Tool("srv__do", "an MCP tool without annotations", kind=OTHER, asks=True, executes=True)


@pytest.mark.parametrize("tool", [COMMIT, EDIT, PROGRAM_EDIT, TESTS, UNSAID])
def test_read_only_refuses_every_tool_that_is_not_a_read(tool: Tool) -> None:
    policy = policy_for(Config(), READ_ONLY)
    assert policy.decide(tool, command_allowed=True) == Decision.DENY
    rule = policy.rule(tool, command_allowed=True)
    assert rule.startswith('the approval mode "read-only"') and tool.name in rule
    # Not even an explicit approval of the tool brings it back.
    approving = policy_for(Config(policy=PolicyConfig(approvals={tool.name: "auto"})), READ_ONLY)
    assert approving.decide(tool, command_allowed=True) == Decision.DENY


def test_read_only_lets_reads_through_as_the_settings_decide() -> None:
    policy = policy_for(Config(), READ_ONLY)
    assert policy.decide(READ_TOOL) == Decision.AUTO
    assert policy.decide(MCP_READ) == Decision.ASK  # a server's hint never skips the person


def test_auto_edits_applies_file_changes_only() -> None:
    policy = policy_for(Config(), AUTO_EDITS)
    assert policy.decide(EDIT) == Decision.AUTO
    assert policy.decide(PROGRAM_EDIT) == Decision.ASK  # a program that edits is still asked
    assert policy.decide(COMMIT) == Decision.ASK
    assert policy.decide(UNSAID) == Decision.ASK
    assert policy.decide(TESTS, command_allowed=False) == Decision.ASK
    denied = policy_for(Config(policy=PolicyConfig(approvals={"edit_file": "deny"})), AUTO_EDITS)
    assert denied.decide(EDIT) == Decision.DENY  # a setting's deny stays


def test_ask_is_the_settings_as_they_are() -> None:
    assert policy_for(Config()).decide(EDIT) == Decision.ASK
    assert policy_for(Config(), ASK).decide(TESTS, command_allowed=True) == Decision.AUTO
    with pytest.raises(ValueError, match="read-only"):
        policy_for(Config(), "yolo")
