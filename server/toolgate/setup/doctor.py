"""`toolgate doctor`: one screen that says whether a run can start here, and how to fix it.

Each check is a line: the Python, git, bubblewrap (the OS sandbox), the model endpoint
(reachable, the model listed, native or text tool calling), the embedded local model
(installed, its self-check) and workspace trust. A check that fails comes with the command
that fixes it. The report is `ok` only when a run can start; warnings do not stop one.
The language server's `toolgate.doctor` gives the editor the same report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate import __version__
from toolgate.config import Config, ConfigError

OK, WARN, FAIL, INFO = "ok", "warn", "fail", "info"
MIN_PYTHON = (3, 10)


@dataclass
class Check:
    """One line of the report: what was checked, how it went, and the command that fixes it."""

    name: str
    status: str  # ok, warn (a run still starts), fail (it cannot), info (nothing to fix)
    summary: str
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`toolgate doctor --json`, the editor's Check Setup)."""
        return {"name": self.name, "status": self.status, "summary": self.summary, "fix": self.fix}


@dataclass
class Report:
    """Every check, in the order they are shown."""

    workspace: Path
    checks: list[Check] = field(default_factory=list)
    found_servers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether a run can start: no check failed."""
        return all(check.status != FAIL for check in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, with the text a person reads."""
        return {
            "ok": self.ok,
            "version": __version__,
            "workspace": str(self.workspace),
            "checks": [check.to_dict() for check in self.checks],
            "foundServers": self.found_servers,
            "text": self.render(),
        }

    def render(self, colour: bool = False) -> str:
        """The screen: one line per check, its fix indented below, and the verdict."""
        paint = {OK: "32", WARN: "33", FAIL: "31", INFO: "2"}
        lines = [f"toolgate {__version__} doctor — {self.workspace}", ""]
        for check in self.checks:
            mark = f"{check.status:<4}"
            if colour:
                mark = f"\033[{paint[check.status]}m{mark}\033[0m"
            lines.append(f"  {mark}  {check.name}: {check.summary}")
            if check.fix:
                lines.append(f"        fix: {check.fix}")
        lines.append("")
        if self.ok:
            lines.append("A run can start here.")
        else:
            failed = [check.name for check in self.checks if check.status == FAIL]
            lines.append(f"A run cannot start until this is fixed: {', '.join(failed)}.")
        return "\n".join(lines)


def install_hint(package: str) -> str:
    """The command that installs a system package here, as well as it can be guessed."""
    if shutil.which("apt-get"):
        return f"sudo apt-get install {package}"
    if shutil.which("dnf"):
        return f"sudo dnf install {package}"
    if shutil.which("pacman"):
        return f"sudo pacman -S {package}"
    if shutil.which("brew"):
        return f"brew install {package}"
    return f"install {package} with your system's package manager"


def check_python() -> Check:
    """The Python that runs Toolgate."""
    found = ".".join(str(part) for part in sys.version_info[:3])
    if sys.version_info[:2] < MIN_PYTHON:
        return Check(
            "Python",
            FAIL,
            f"{found} at {sys.executable}; Toolgate needs 3.10 or newer",
            "install Python 3.10 or newer, then: pipx install toolgate --python python3.12",
        )
    return Check("Python", OK, f"{found} ({sys.executable})")


def check_git() -> Check:
    """git: the git tools and the workspace's state read through it."""
    git = shutil.which("git")
    if git is None:
        return Check(
            "git",
            WARN,
            "not installed: git_status, git_add, git_commit are refused and changes are "
            "told apart by file contents only",
            install_hint("git"),
        )
    try:
        done = subprocess.run([git, "--version"], capture_output=True, text=True, timeout=10)
        said = done.stdout.strip().removeprefix("git version ")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("git", WARN, f"{git} does not run: {exc}", install_hint("git"))
    return Check("git", OK, said or git)


def check_sandbox(config: Config | None) -> Check:
    """bubblewrap, the OS sandbox tests and commands run in."""
    from toolgate.runner.sandbox import bwrap_problem

    mode = config.sandbox.mode if config is not None else "auto"
    if mode == "off":
        return Check("bubblewrap", INFO, 'not used: sandbox.mode = "off"')
    problem = bwrap_problem()
    if problem is None:
        return Check("bubblewrap", OK, "tests and commands run in the OS sandbox")
    if platform.system() != "Linux":
        fix = None  # bubblewrap is Linux's; elsewhere there is nothing to install
    elif shutil.which("bwrap") is None:
        fix = install_hint("bubblewrap")
    else:
        fix = "allow unprivileged user namespaces (docs/SECURITY.md, 'The OS sandbox')"
    if mode == "required":
        return Check("bubblewrap", FAIL, f'{problem}, and sandbox.mode = "required"', fix)
    return Check("bubblewrap", WARN, f"{problem}: tests and commands run unconfined", fix)


async def check_model(config: Config, self_check: bool) -> tuple[Check, Check]:
    """The endpoint, and the embedded model: each a line."""
    from toolgate.model.local_assets import local_runtime_available
    from toolgate.setup.endpoint_check import check_endpoint

    missing = local_runtime_available()
    if config.model.base_url:
        found = await check_endpoint(
            config.model.base_url, config.api_key, config.model.name, mode=config.tool_calling.mode
        )
        endpoint = Check("endpoint", OK if found.ok else FAIL, found.summary(), found.fix)
        if found.ok and found.notes:
            endpoint.summary += f" ({'; '.join(found.notes)})"
        embedded = (
            Check("embedded model", INFO, "not installed (not needed: an endpoint is configured)")
            if missing
            else await _embedded(self_check, WARN)
        )
        return endpoint, embedded
    if missing:
        return (
            Check(
                "endpoint",
                FAIL,
                "no model endpoint is configured, and the embedded model is not installed",
                "toolgate run --base-url URL --model NAME (or OPENAI_BASE_URL and "
                "TOOLGATE_MODEL), or install the embedded model: toolgate model install",
            ),
            Check(
                "embedded model",
                INFO,
                "not installed",
                "toolgate model install (compiles for about 10 minutes, downloads 470 MB)",
            ),
        )
    return (
        Check("endpoint", OK, "none configured: runs use the embedded local model"),
        await _embedded(self_check, FAIL),
    )


async def _embedded(self_check: bool, severity: str) -> Check:
    """The installed embedded model: its file, and whether the runtime answers."""
    from toolgate.model.local_assets import (
        MODEL_FILE_NAME,
        MODEL_TITLE,
        LocalModelError,
        default_cache_dir,
        ensure_model_file,
    )
    from toolgate.setup.model_install import run_self_check

    if not (default_cache_dir() / MODEL_FILE_NAME).is_file():
        # The doctor writes nothing: the first run assembles the 491 MB file from its parts.
        return Check("embedded model", OK, f"{MODEL_TITLE} installed; assembled at its first run")
    try:
        model = await asyncio.to_thread(ensure_model_file)
    except LocalModelError as exc:
        return Check("embedded model", severity, str(exc), "toolgate model install")
    if not self_check:
        return Check("embedded model", OK, f"{MODEL_TITLE} installed (self-check skipped)")
    check = await asyncio.to_thread(run_self_check, model)
    if not check.ok:
        return Check(
            "embedded model",
            severity,
            f"installed, but its self-check {check.describe()} (log: {check.log})",
            "toolgate model install (rebuilds the runtime when it crashes)",
        )
    return Check("embedded model", OK, f"{MODEL_TITLE} installed; it answers")


def check_trust(root: Path, config: Config, editor_trusted: bool | None) -> Check:
    """What the workspace's files widen, and whether the editor trusts the folder."""
    from toolgate.session import SetupError
    from toolgate.session import check_trust as held_back

    try:
        notices = held_back(root, config)
    except SetupError as exc:
        return Check("workspace trust", FAIL, str(exc), f"toolgate trust --workspace {root}")
    if editor_trusted is False:
        return Check(
            "workspace trust",
            WARN,
            "the editor opened this folder in Restricted Mode: tests, git and manifest tools "
            "are refused",
            "trust the folder (Workspaces: Manage Workspace Trust)",
        )
    if notices:
        return Check(
            "workspace trust",
            WARN,
            "; ".join(notices),
            f"toolgate trust --workspace {root}",
        )
    return Check("workspace trust", OK, "nothing the workspace's files ask for is held back")


async def diagnose(
    root: Path,
    load: Callable[[], Config],
    *,
    editor_trusted: bool | None = None,
    self_check: bool = True,
) -> Report:
    """Every check, for the workspace `root` with the configuration `load` gives."""
    from toolgate.setup.local_servers import find_local_servers

    report = Report(root)
    report.checks += [check_python(), check_git()]
    try:
        config = load()
    except ConfigError as exc:
        report.checks += [
            check_sandbox(None),
            Check("configuration", FAIL, str(exc), "correct the setting it names"),
        ]
        return report
    report.checks.append(check_sandbox(config))
    # Trust first: the API key goes to no base URL the person has not confirmed.
    trust = check_trust(root, config, editor_trusted)
    if trust.status == FAIL:
        endpoint = Check("endpoint", FAIL, "not asked: its base URL is not confirmed", trust.fix)
        report.checks += [endpoint]
    else:
        endpoint, embedded = await check_model(config, self_check)
        report.checks += [endpoint, embedded]
    if endpoint.status == FAIL:
        # Servers already running here that the person may point Toolgate at instead.
        found = await find_local_servers()
        report.found_servers = [server.to_dict() for server in found]
        for server in found:
            if server.base_url == (config.model.base_url or "").rstrip("/"):
                continue
            models = ", ".join(server.models[:5]) or "no models yet"
            first = f" --model {server.models[0]}" if server.models else ""
            report.checks.append(
                Check(
                    f"found {server.name}",
                    INFO,
                    f"{server.base_url} serves {models}",
                    f"toolgate run --base-url {server.base_url}{first} …",
                )
            )
    report.checks.append(trust)
    return report


def main(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """`toolgate doctor`: the screen (or `--json`); 0 when a run can start, else 1."""
    from toolgate.config import load_config

    root = Path(args.workspace).resolve()
    report = asyncio.run(
        diagnose(
            root,
            lambda: load_config(root, overrides=overrides),
            self_check=not args.no_self_check,
        )
    )
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        print(report.render(colour=colour))
    return 0 if report.ok else 1
