"""The official MCP conformance suite against `toolgate mcp --http --conformance-fixtures`.

Every server scenario of the pinned suite at protocol 2025-11-25 is either applicable, and must
pass, or listed below as not applicable with the reason. A scenario the suite gains when it is
bumped fails the test until it is sorted into one list or the other.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import mcp_conformance
from tests.support.mcp_http import http_server

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')

SPEC = "2025-11-25"

APPLICABLE = [
    "server-initialize",
    "server-session-lifecycle",
    "logging-set-level",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-elicitation",
    "json-schema-2020-12",
    "elicitation-sep1034-defaults",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "elicitation-sep1330-enums",
    "dns-rebinding-protection",
]

_CONTENT = "no Toolgate tool returns {}: every result is one text block of JSON"
_RESOURCES = "Toolgate serves tools only: it has no resources to list, read or subscribe to"
_PROMPTS = "Toolgate serves tools only: it has no prompts"
NOT_APPLICABLE = {
    "completion-complete": "Toolgate has no prompts or resource templates whose arguments "
    "could be completed",
    "tools-call-image": _CONTENT.format("images"),
    "tools-call-audio": _CONTENT.format("audio"),
    "tools-call-embedded-resource": _CONTENT.format("embedded resources"),
    "tools-call-mixed-content": _CONTENT.format("images or embedded resources"),
    "tools-call-sampling": "Toolgate's server never asks the client's model (sampling): its "
    "agent tools use Toolgate's own configured model",
    "resources-list": _RESOURCES,
    "resources-read-text": _RESOURCES,
    "resources-read-binary": _RESOURCES,
    "resources-templates-read": _RESOURCES,
    "resources-subscribe": _RESOURCES,
    "resources-unsubscribe": _RESOURCES,
    "prompts-list": _PROMPTS,
    "prompts-get-simple": _PROMPTS,
    "prompts-get-with-args": _PROMPTS,
    "prompts-get-embedded-resource": _PROMPTS,
    "prompts-get-with-image": _PROMPTS,
}


def test_every_applicable_server_scenario_passes(repo: Path, tmp_path: Path) -> None:
    suite = mcp_conformance.suite()
    scenarios = mcp_conformance.listed(suite, "server", SPEC)
    unsorted = set(scenarios) - set(APPLICABLE) - set(NOT_APPLICABLE)
    assert not unsorted, f"scenarios of the suite neither applicable nor excused: {unsorted}"

    out = tmp_path / "results"
    with http_server(repo, "--conformance-fixtures") as server:
        done = suite.run(
            "server", "--url", server.url, "--suite", "all", "--spec-version", SPEC,
            "--output-dir", str(out),
        )  # fmt: skip
    ran = mcp_conformance.results(out, scenarios, prefix="server-")
    passed, problems = mcp_conformance.verdict(ran, APPLICABLE, done.stdout + done.stderr)
    assert not problems, "\n".join(problems)
    assert passed == APPLICABLE
    # The excused ones do fail: were one to pass, it would belong in APPLICABLE.
    for name in NOT_APPLICABLE:
        assert mcp_conformance.failures(ran[name]), f"{name} passes: is it applicable now?"
