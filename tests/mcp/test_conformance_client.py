"""The official MCP conformance suite against Toolgate's MCP client, driven as a person drives it.

For each client scenario the suite starts its own server and runs `conformance_client.py URL`,
which puts the URL in a fresh user configuration and runs `toolgate run --approve auto` whose
scripted model calls the scenario's tool; OAuth scenarios sign in through a $BROWSER script that
follows the authorization URL. Every client scenario of the pinned suite at protocol 2025-11-25
applies to Toolgate, and each must pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.support import mcp_conformance

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')

SPEC = "2025-11-25"
DRIVER = Path(__file__).with_name("conformance_client.py")

APPLICABLE = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
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


def test_every_client_scenario_is_listed_here() -> None:
    suite = mcp_conformance.suite()
    listed = mcp_conformance.listed(suite, "client", SPEC)
    assert sorted(listed) == sorted(APPLICABLE), "the suite's client scenarios changed"


@pytest.mark.parametrize("scenario", APPLICABLE)
def test_client_scenario_passes(scenario: str, tmp_path: Path) -> None:
    suite = mcp_conformance.suite()
    out = tmp_path / "results"
    done = suite.run(
        "client", "--command", f"{sys.executable} {DRIVER}", "--scenario", scenario,
        "--spec-version", SPEC, "--timeout", "240000", "--output-dir", str(out),
        timeout=300,
    )  # fmt: skip
    ran = mcp_conformance.results(out, [scenario])
    passed, problems = mcp_conformance.verdict(ran, [scenario], done.stdout + done.stderr)
    assert not problems, "\n".join(problems)
    assert passed == [scenario]
    assert done.returncode == 0, done.stdout[-3000:]
