"""Tool manifests: a workspace adds a tool by describing a program to run, no Python needed.

`.agent/tools/NAME.toml`:

    name = "lint"
    description = "Lint one file with ruff."
    command = ["ruff", "check", "{path}"]     # argv template; each "{param}" is one argument
    timeout_seconds = 60
    capabilities = ["code.lint"]              # optional: what the registry resolves it for
    kind = "read"                             # optional: read, change, run, git or other

    [parameters]
    type = "object"
    required = ["path"]
    [parameters.properties.path]
    type = "string"

A manifest tool runs like any command: without a shell, in its own process group, and only
when its argv is on the allow-list or the person says yes to that exact command. Its `kind`
says what it does (`toolgate.tools.schema.KINDS`); without one it is `other`, a tool that may
change anything, which the approval mode "read-only" refuses.

This is the `tool.yaml` contract (see `toolgate.tools.yaml_manifest`) in another syntax, for
wrapping an existing program: `parameters` is the input schema, the output is always
`{argv, exit_code, output}`, and the allow-list stands where a `tool.yaml` has trust by hash.
`load_manifests` returns the tools of both kinds.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolgate.records import ToolResult
from toolgate.runner.allowlist import CommandRefused
from toolgate.runner.process import resolve_executable, run_process
from toolgate.tools.activity import ActivityContext
from toolgate.tools.schema import FRESH, KINDS, OTHER, Tool

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
_CAPABILITY = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")

# What every argv-template tool gives back.
COMMAND_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "argv": {"type": "array", "items": {"type": "string"}},
        "exit_code": {"type": ["integer", "null"]},
        "output": {"type": "string"},
    },
}


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file."""


class ManifestCommand:
    """Runs a manifest's argv template with the call's arguments."""

    def __init__(self, template: list[str], timeout_seconds: float | None) -> None:
        self.template = template
        self.timeout_seconds = timeout_seconds

    def argv(self, ctx: ActivityContext, args: dict[str, Any]) -> list[str]:
        """Fill the template; each placeholder becomes (part of) one argument, never more."""
        out = []
        for part in self.template:

            def fill(match: re.Match[str]) -> str:
                value = args.get(match.group(1))
                if value is None:
                    raise CommandRefused(f"missing argument {match.group(1)!r}")
                if isinstance(value, (dict, list)):
                    raise CommandRefused(f"argument {match.group(1)!r} must be a scalar")
                return str(value)

            out.append(_PLACEHOLDER.sub(fill, part))
        if any("\x00" in part for part in out):
            raise CommandRefused("arguments may not contain NUL bytes")
        return out

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Run the program in the workspace root."""
        start = time.perf_counter()
        if not ctx.settings.trusted:
            return ToolResult.fail("this workspace is not trusted, so manifest tools may not run")
        try:
            argv = self.argv(ctx, args)
        except CommandRefused as exc:
            return ToolResult.fail(str(exc))
        root = ctx.workspace.root
        outcome = await run_process(
            resolve_executable(argv, root, root=root),
            root,
            timeout_seconds=self.timeout_seconds or ctx.settings.command_timeout_seconds,
            max_output_bytes=ctx.settings.max_output_bytes,
            sandbox=ctx.settings.sandbox,
            root=root,
        )
        ok = outcome.exit_code == 0
        error = None
        if outcome.timed_out:
            error = "timed out; the process group was killed"
        elif not ok:
            error = f"exited with status {outcome.exit_code}"
        return ToolResult(
            success=ok,
            data={"argv": argv, "exit_code": outcome.exit_code, "output": outcome.output},
            error=error,
            duration_seconds=round(time.perf_counter() - start, 6),
            output_truncated=outcome.output_truncated,
            output_size_bytes=outcome.output_size_bytes,
        )


def load_manifest(path: Path) -> tuple[Tool, ManifestCommand]:
    """Read one manifest file."""
    try:
        with path.open("rb") as handle:
            doc = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: {exc}") from None
    unknown = set(doc) - {
        "name",
        "description",
        "command",
        "parameters",
        "timeout_seconds",
        "capabilities",
        "kind",
    }
    if unknown:
        raise ManifestError(f"{path}: unknown key '{sorted(unknown)[0]}'")
    name = doc.get("name", path.stem)
    if not isinstance(name, str) or not _NAME.match(name):
        raise ManifestError(f"{path}: 'name' must be a tool name (letters, digits, _ and -)")
    command = doc.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(p, str) for p in command):
        raise ManifestError(f"{path}: 'command' must be a non-empty list of strings (argv)")
    params = doc.get("parameters", {"type": "object", "properties": {}})
    try:
        Draft202012Validator.check_schema(params)
    except SchemaError as exc:
        raise ManifestError(
            f"{path}: 'parameters' is not a valid JSON Schema: {exc.message}"
        ) from None
    timeout = doc.get("timeout_seconds")
    if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ManifestError(f"{path}: 'timeout_seconds' must be a positive number")
    capabilities = doc.get("capabilities", [])
    if not isinstance(capabilities, list) or not all(
        isinstance(c, str) and _CAPABILITY.match(c) for c in capabilities
    ):
        raise ManifestError(
            f"{path}: 'capabilities' must be a list of domain.action names (e.g. \"code.lint\")"
        )
    kind = doc.get("kind", OTHER)
    if kind not in KINDS:
        raise ManifestError(f"{path}: 'kind' must be one of {', '.join(KINDS)}, not {kind!r}")
    tool = Tool(
        name=name,
        description=str(doc.get("description", name)),
        parameters=params,
        output=COMMAND_OUTPUT,
        kind=kind,
        asks=True,
        executes=True,
        capabilities=tuple(capabilities),
        repeat=FRESH,  # a program's answer may change with anything
    )
    return tool, ManifestCommand(list(command), timeout)


def load_toml_manifests(root: Path) -> list[tuple[Tool, ManifestCommand]]:
    """Every manifest in `.agent/tools/*.toml`, in name order."""
    folder = root / ".agent" / "tools"
    if not folder.is_dir():
        return []
    return [load_manifest(path) for path in sorted(folder.glob("*.toml"))]
