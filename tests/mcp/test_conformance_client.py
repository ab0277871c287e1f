"""The official MCP conformance suite against Toolgate's MCP client, driven as a person drives it.

For each client scenario the suite starts its own server and runs `conformance_client.py URL`,
which puts the URL in a fresh user configuration and runs `toolgate run --approve auto` whose
scripted model calls the scenario's tool; OAuth scenarios sign in through a $BROWSER script that
follows the authorization URL. Every client scenario of the pinned suite, at protocol 2025-11-25
(the initialize handshake) and at 2026-07-28 (stateless requests, found by `server/discover`),
applies to Toolgate, and each must pass (a check that does not apply is excused by name).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.support import mcp_conformance

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')

DRIVER = Path(__file__).with_name("conformance_client.py")

_BOTH = [
    "tools_call",
    "json-schema-2020-12-preservation",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]
APPLICABLE = {
    "2025-11-25": [*_BOTH, "initialize", "elicitation-sep1034-client-defaults", "sse-retry"],
    "2026-07-28": [
        *_BOTH,
        "request-metadata",
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
    ],
}

# Checks that do not apply, inside scenarios that do.
EXCUSED_CHECKS = {
    "http-custom-headers": {
        # The model's call passes `null` for a boolean: Toolgate's gate refuses arguments
        # that break the tool's schema, so the call never reaches the server.
        "sep-2243-client-omit-null": "arguments against the tool's schema are refused first",
    },
}


@pytest.mark.parametrize("spec", sorted(APPLICABLE))
def test_every_client_scenario_is_listed_here(spec: str) -> None:
    suite = mcp_conformance.suite()
    listed = mcp_conformance.listed(suite, "client", spec)
    assert sorted(listed) == sorted(APPLICABLE[spec]), "the suite's client scenarios changed"


@pytest.mark.parametrize(
    ("spec", "scenario"), [(spec, name) for spec, names in APPLICABLE.items() for name in names]
)
def test_client_scenario_passes(spec: str, scenario: str, tmp_path: Path) -> None:
    suite = mcp_conformance.suite()
    out = tmp_path / "results"
    done = suite.run(
        "client", "--command", f"{sys.executable} {DRIVER}", "--scenario", scenario,
        "--spec-version", spec, "--timeout", "240000", "--output-dir", str(out),
        timeout=300,
    )  # fmt: skip
    ran = mcp_conformance.results(out, [scenario])
    passed, problems = mcp_conformance.verdict(
        ran, [scenario], done.stdout + done.stderr, EXCUSED_CHECKS
    )
    assert not problems, "\n".join(problems)
    assert passed == [scenario]
    if scenario not in EXCUSED_CHECKS:
        assert done.returncode == 0, done.stdout[-3000:]
