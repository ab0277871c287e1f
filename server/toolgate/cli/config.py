"""toolgate config show: what customizes the agent here (files of the workspace and the person)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolgate.cli import flags
from toolgate.cli.workspace import workspace_root


def register(sub: Any) -> None:
    """Add `config` and its `show` to the subcommands."""
    config = sub.add_parser("config", help="what shapes the agent here, and where from")
    show = config.add_subparsers(dest="config_command", required=True).add_parser(
        "show", help="rules, skills, commands, hooks and MCP servers found, with their sources"
    )
    flags.workspace(show)
    show.add_argument("--json", action="store_true", help="print it as JSON")
    config.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """`toolgate config show`, with the configuration the flags set."""
    return config_show_main(args, flags.overrides(args))


def config_show_main(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """Print the rules, skills, commands, hooks and MCP servers found (or JSON with --json)."""
    from toolgate.config import ConfigError, load_config
    from toolgate.session.customization import gather_customization

    root = workspace_root(args.workspace)
    if root is None:
        return 2
    try:
        config = load_config(root, overrides=overrides)
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return 2
    found = gather_customization(root, config)
    if args.json:
        print(json.dumps(found.to_json(), indent=2))
        return 0
    print(f"workspace: {root}")
    for line in found.lines():
        print(line)
    return 0
