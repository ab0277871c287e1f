"""toolgate config show: what customizes the agent here (files of the workspace and the person)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolgate.cli.workspace import workspace_root
from toolgate.config import ConfigError, apply_trust, load_config
from toolgate.session.customization import gather_customization
from toolgate.trust import TrustStore


def config_show_main(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """Print the rules, skills, commands, hooks and MCP servers found (or JSON with --json)."""
    root = workspace_root(args.workspace)
    if root is None:
        return 2
    try:
        config = load_config(root, overrides=overrides)
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return 2
    apply_trust(config, TrustStore().confirmed(root))
    found = gather_customization(root, config)
    if args.json:
        print(json.dumps(found.to_json(), indent=2))
        return 0
    print(f"workspace: {root}")
    for line in found.lines():
        print(line)
    return 0
