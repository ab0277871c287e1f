"""The official MCP conformance suite (npm `@modelcontextprotocol/conformance`), run by the tests.

`scripts/install-mcp-conformance.sh` installs it, with the Node it runs on, at the version
pinned here; `scripts/test.sh` runs that script before the full suite. Without it the tests
fail saying how to install it — except in `scripts/test.sh --quick`, which installs no Node and
where they are skipped with that reason.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Bump with scripts/install-mcp-conformance.sh, and go over the scenario lists in the tests.
VERSION = "0.2.0-alpha.11"
INSTALL = "bash scripts/install-mcp-conformance.sh"
CACHE = Path(
    os.environ.get(
        "TOOLGATE_MCP_CONFORMANCE_CACHE", Path.home() / ".cache" / "toolgate-mcp-conformance"
    )
)
# Failing checks' messages shown per scenario when a test fails.
_SHOWN = 3


@dataclass(frozen=True)
class Suite:
    """The installed suite: the Node that runs it and its command-line entry point."""

    node: str
    cli: str

    def command(self, *args: str) -> list[str]:
        """The argv of `conformance ARGS…`."""
        return [self.node, self.cli, *args]

    def run(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 900
    ) -> subprocess.CompletedProcess[str]:
        """Run `conformance ARGS…` to its end; its output is kept for the failure message."""
        return subprocess.run(
            self.command(*args),
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _from_env_file() -> dict[str, str]:
    found: dict[str, str] = {}
    env_file = CACHE / "env.sh"
    if env_file.is_file():
        for line in env_file.read_text().splitlines():
            match = re.match(r"export (\w+)=(.*)$", line.strip())
            if match:
                found[match.group(1)] = shlex.split(match.group(2))[0]
    return found


def suite() -> Suite:
    """The installed suite at the pinned version; otherwise fail (skip in quick runs) saying why."""
    known = {**_from_env_file(), **os.environ}
    node = known.get("TOOLGATE_CONFORMANCE_NODE", "")
    cli = known.get("TOOLGATE_CONFORMANCE_CLI", "")
    problem = None
    if not (node and Path(node).is_file() and cli and Path(cli).is_file()):
        problem = "the MCP conformance suite and its Node are not installed"
    else:
        version = subprocess.run(
            [node, cli, "--version"], capture_output=True, text=True, timeout=120
        ).stdout.strip()
        if version != VERSION:
            problem = f"the installed MCP conformance suite is {version!r}, not {VERSION!r}"
    if problem is not None:
        reason = f"{problem}: run `{INSTALL}` (scripts/test.sh does)"
        if os.environ.get("TOOLGATE_TESTS_QUICK") == "1":
            pytest.skip(reason)
        pytest.fail(reason)
    return Suite(node, cli)


def results(
    out_dir: Path, scenarios: list[str], prefix: str = ""
) -> dict[str, list[dict[str, Any]]]:
    """Each scenario's checks, read from the suite's output folder.

    The suite writes `{prefix}{name}-{time}/checks.json` (`server-` for server scenarios; a
    name with a slash, `auth/…`, makes a subfolder).
    """
    found: dict[str, list[dict[str, Any]]] = {}
    for name in scenarios:
        where = Path(prefix + name)
        folder = out_dir / where.parent
        if not folder.is_dir():
            continue
        pattern = re.escape(f"{where.name}-") + r"\d{4}-\d\d-\d\dT"
        for entry in folder.iterdir():
            checks = entry / "checks.json"
            if re.match(pattern, entry.name) and checks.is_file():
                found[name] = json.loads(checks.read_text())
    return found


def failures(checks: list[dict[str, Any]], excused: Mapping[str, str] | None = None) -> list[str]:
    """The failed checks of one scenario, one line each (but those `excused`, by check id)."""
    return [
        f"{c.get('id')}: {c.get('errorMessage') or c.get('description')}"
        for c in checks
        if c.get("status") == "FAILURE" and c.get("id") not in (excused or {})
    ]


def warnings(checks: list[dict[str, Any]]) -> list[str]:
    """The checks of one scenario that passed with a warning."""
    return [str(c.get("id")) for c in checks if c.get("status") == "WARNING"]


def verdict(
    ran: dict[str, list[dict[str, Any]]],
    applicable: list[str],
    output: str,
    excused: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[list[str], list[str]]:
    """(passed, problems): every applicable scenario ran, and none of its checks failed.

    `excused` names checks of an applicable scenario that do not apply (scenario → check id →
    why); they may fail.
    """
    passed: list[str] = []
    problems: list[str] = []
    for name in applicable:
        if name not in ran:
            problems.append(f"{name}: did not run")
            continue
        failed = failures(ran[name], (excused or {}).get(name))
        if failed:
            problems.append(f"{name}: " + "; ".join(failed[:_SHOWN]))
        else:
            passed.append(name)
    if problems:
        problems.append("the suite said:\n" + output[-4000:])
    return passed, problems


def listed(suite: Suite, kind: str, spec_version: str) -> list[str]:
    """The scenarios the suite has for a side (`server`, `client`) at a protocol version."""
    done = suite.run("list", f"--{kind}", "--spec-version", spec_version, timeout=120)
    assert done.returncode == 0, done.stderr
    return re.findall(r"^\s+- (\S+)", done.stdout, flags=re.MULTILINE)
