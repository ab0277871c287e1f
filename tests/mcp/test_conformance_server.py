"""The official MCP conformance suite against `toolgate mcp --http --conformance-fixtures`.

The suite runs at both protocol versions the server speaks: 2025-11-25 (the initialize
handshake, sessions) and 2026-07-28 (stateless requests carrying their own `_meta`). Every
server scenario of the pinned suite at a version is either applicable, and must pass, or listed
below as not applicable to a coding agent's tools, with the reason. A scenario the suite gains
when it is bumped fails the test until it is sorted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import mcp_conformance
from tests.support.mcp_http import http_server

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')

_CONTENT = "no Toolgate tool returns {}: every result is one text block of JSON"
_RESOURCES = "Toolgate serves tools only: it has no resources to list, read or subscribe to"
_PROMPTS = "Toolgate serves tools only: it has no prompts"
_SAMPLING = (
    "Toolgate's server never asks the client's model (sampling): its agent tools use "
    "Toolgate's own configured model"
)
_ROOTS = "Toolgate's server never asks the client for its roots: it serves one workspace"
NOT_APPLICABLE = {
    "completion-complete": "Toolgate has no prompts or resource templates whose arguments "
    "could be completed",
    "tools-call-image": _CONTENT.format("images"),
    "tools-call-audio": _CONTENT.format("audio"),
    "tools-call-embedded-resource": _CONTENT.format("embedded resources"),
    "tools-call-mixed-content": _CONTENT.format("images or embedded resources"),
    "tools-call-sampling": _SAMPLING,
    "resources-list": _RESOURCES,
    "resources-read-text": _RESOURCES,
    "resources-read-binary": _RESOURCES,
    "resources-templates-read": _RESOURCES,
    "resources-subscribe": _RESOURCES,
    "resources-unsubscribe": _RESOURCES,
    "sep-2164-resource-not-found": _RESOURCES,
    "prompts-list": _PROMPTS,
    "prompts-get-simple": _PROMPTS,
    "prompts-get-with-args": _PROMPTS,
    "prompts-get-embedded-resource": _PROMPTS,
    "prompts-get-with-image": _PROMPTS,
    "http-custom-header-server-validation": "no Toolgate tool mirrors an argument into a "
    "header (`x-mcp-header`), so there is nothing for the server to validate",
    "input-required-result-basic-sampling": _SAMPLING,
    "input-required-result-basic-list-roots": _ROOTS,
    "input-required-result-multiple-input-requests": f"{_SAMPLING}; {_ROOTS}",
    "input-required-result-non-tool-request": _PROMPTS,
    "input-required-result-capability-check": "its client declares sampling alone and "
    f"expects to be asked through it: {_SAMPLING}",
}

# Checks that do not apply, inside scenarios that do.
EXCUSED_CHECKS = {
    "server-stateless": {
        "sep-2575-server-rejects-undeclared-capability": _SAMPLING,
        "sep-2575-missing-capability-http-400": _SAMPLING,
    },
    "caching": {
        "sep-2549-prompts-list-caching-hints": _PROMPTS,
        "sep-2549-resources-list-caching-hints": _RESOURCES,
        "sep-2549-resources-templates-list-caching-hints": _RESOURCES,
    },
}

APPLICABLE = {
    "2025-11-25": [
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
    ],
    "2026-07-28": [
        "server-stateless",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-error",
        "tools-call-with-progress",
        "json-schema-2020-12",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        "caching",
        "http-header-validation",
        "input-required-result-basic-elicitation",
        "input-required-result-request-state",
        "input-required-result-multi-round",
        "input-required-result-missing-input-response",
        "input-required-result-result-type",
        "input-required-result-tampered-state",
        "input-required-result-unsupported-methods",
        "input-required-result-ignore-extra-params",
        "input-required-result-validate-input",
    ],
}


@pytest.mark.parametrize("spec", sorted(APPLICABLE))
def test_every_applicable_server_scenario_passes(spec: str, repo: Path, tmp_path: Path) -> None:
    suite = mcp_conformance.suite()
    scenarios = mcp_conformance.listed(suite, "server", spec)
    applicable = APPLICABLE[spec]
    unsorted = set(scenarios) - set(applicable) - set(NOT_APPLICABLE)
    assert not unsorted, f"scenarios of the suite neither applicable nor excused: {unsorted}"

    out = tmp_path / "results"
    with http_server(repo, "--conformance-fixtures") as server:
        done = suite.run(
            "server", "--url", server.url, "--suite", "all", "--spec-version", spec,
            "--output-dir", str(out),
        )  # fmt: skip
    ran = mcp_conformance.results(out, scenarios, prefix="server-")
    passed, problems = mcp_conformance.verdict(
        ran, applicable, done.stdout + done.stderr, EXCUSED_CHECKS
    )
    assert not problems, "\n".join(problems)
    assert passed == applicable
    # The excused ones do fail, or warn: were one to pass cleanly, it would be applicable.
    for name in set(NOT_APPLICABLE) & set(scenarios):
        checks = ran[name]
        assert mcp_conformance.failures(checks) or mcp_conformance.warnings(checks), name
