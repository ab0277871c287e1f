"""MCP server lists in the JSON files people already keep, read into Toolgate's own shape.

- `.mcp.json` (Claude Code and others): `{"mcpServers": {NAME: {command, args, env} |
  {type, url, headers}}}`, with `${VAR}` and `${VAR:-default}` from the environment;
- `.vscode/mcp.json` (VS Code): `{"servers": {NAME: {type, command, args, env} | {type, url,
  headers}}, "inputs": […]}`, with `${env:VAR}`, `${workspaceFolder}` and `${input:ID}`;
- the person's own `$XDG_CONFIG_HOME/toolgate/mcp.json`, in either shape.

Each server becomes the table `[mcp.servers.NAME]` would hold (`command` as one argv, `env`,
or `url`, `type` and `headers`), so one code path starts them and one trust rule covers them:
a workspace's servers wait for the person's confirmation. A header's variables stay
`${env:NAME}` references, read only when connecting. A value VS Code would prompt for
(`${input:ID}`) cannot be asked for here; such a server is listed with that reason.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORKSPACE_FILES = (".mcp.json", ".vscode/mcp.json")
_NAME = re.compile(r"^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$")
_VARIABLE = re.compile(r"\$\{([^}]+)\}")


@dataclass
class McpFile:
    """The servers one file names, in Toolgate's shape, and those that could not be taken."""

    path: Path
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # name → why
    problem: str | None = None  # the whole file could not be read


class _NeedsInput(Exception):
    pass


def _expand(value: str, env: Mapping[str, str], root: Path) -> str:
    def one(match: re.Match[str]) -> str:
        inner = match.group(1)
        if inner.startswith("input:"):
            raise _NeedsInput(inner[6:])
        if inner in ("workspaceFolder", "workspaceRoot"):
            return str(root)
        if inner == "userHome":
            return str(Path.home())
        name, _, default = inner.removeprefix("env:").partition(":-")
        return env.get(name, default)

    return _VARIABLE.sub(one, value)


def _lazy(value: str, env: Mapping[str, str], root: Path) -> str:
    """A header's value with its variables left as `${env:NAME}`, read when connecting.

    A header usually carries a token: kept as a reference, it never lands in the
    configuration Toolgate shows or the run log.
    """

    def one(match: re.Match[str]) -> str:
        inner = match.group(1)
        name, has_default, default = inner.removeprefix("env:").partition(":-")
        if inner.startswith("input:"):
            raise _NeedsInput(inner[6:])
        if inner in ("workspaceFolder", "workspaceRoot", "userHome"):
            return _expand(match.group(0), env, root)
        if has_default and name not in env:
            return default
        return "${env:" + name + "}"

    return _VARIABLE.sub(one, value)


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{where}: a list of strings")
    return list(value)


def _table(raw: Any, env: Mapping[str, str], root: Path) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise ValueError("not an object")
    kind = raw.get("type")
    if "url" in raw:
        url = raw["url"]
        if not isinstance(url, str):
            raise ValueError("url: a string")
        transport = "sse" if kind == "sse" else "http"
        table: dict[str, Any] = {"url": _expand(url, env, root), "type": transport}
        headers = raw.get("headers") or {}
        if not isinstance(headers, Mapping):
            raise ValueError("headers: an object of strings")
        if headers:
            table["headers"] = {str(k): _lazy(str(v), env, root) for k, v in headers.items()}
        return table
    if kind not in (None, "stdio"):
        raise ValueError(f"type {kind!r} without a url")
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError("command: a program to start, missing")
    args = _strings(raw.get("args", []), "args")
    table = {"command": [_expand(part, env, root) for part in [command, *args]]}
    extra = raw.get("env") or {}
    if not isinstance(extra, Mapping):
        raise ValueError("env: an object of strings")
    if extra:
        table["env"] = {str(k): _expand(str(v), env, root) for k, v in extra.items()}
    return table


def read_mcp_file(path: Path, root: Path, env: Mapping[str, str] | None = None) -> McpFile:
    """The servers of one JSON file (either shape); a broken file says why in `problem`."""
    env = os.environ if env is None else env
    found = McpFile(path)
    try:
        doc = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        found.problem = f"{path}: cannot be read ({exc.strerror or exc})"
        return found
    except ValueError as exc:
        found.problem = f"{path}: not valid JSON ({exc})"
        return found
    servers = doc.get("mcpServers", doc.get("servers")) if isinstance(doc, Mapping) else None
    if not isinstance(servers, Mapping):
        found.problem = f"{path}: no `mcpServers` (or `servers`) object"
        return found
    for name, raw in servers.items():
        if not _NAME.match(str(name)):
            found.skipped[str(name)] = "the name may hold letters, digits, '-' and single '_' only"
            continue
        try:
            found.servers[str(name)] = _table(raw, env, root)
        except _NeedsInput as need:
            found.skipped[str(name)] = (
                f"asks for the input {need.args[0]!r}, which only VS Code can prompt for; "
                f"set the server in .toolgate/config.toml [mcp.servers.{name}]"
            )
        except ValueError as exc:
            found.skipped[str(name)] = str(exc)
    return found


def workspace_mcp_files(root: Path) -> list[Path]:
    """The workspace's MCP JSON files that exist, in the order they are read."""
    return [root / name for name in WORKSPACE_FILES if (root / name).is_file()]
