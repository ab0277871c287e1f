"""`toolgate trust`: confirm the settings that the workspace's own files widen."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from toolgate.cli import flags
from toolgate.cli.workspace import workspace_root

EXIT_OK, EXIT_USAGE = 0, 2


def register(sub: Any) -> None:
    """Add `trust` to the subcommands."""
    trust = sub.add_parser("trust", help="confirm settings that the workspace's files widen")
    flags.workspace(trust)
    trust.add_argument("--yes", action="store_true", help="confirm all without asking")
    trust.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Ask for each setting the workspace's files widen (or confirm all with --yes)."""
    from toolgate.config import ConfigError, TrustItem, load_config
    from toolgate.session import SessionService

    root = workspace_root(args.workspace)
    if root is None:
        return EXIT_USAGE

    def load() -> Any:
        # OPENAI_BASE_URL would hide the workspace's own base URL, which is what is confirmed.
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL",)}
        return load_config(root, env=env)

    async def ask(item: TrustItem) -> bool:
        if args.yes:
            return True
        answer = await asyncio.to_thread(input, f"{item.describe()}. Allow? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    service = SessionService(root, load, trust_prompt=ask)
    try:
        config = service.config()
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    chosen, asked = asyncio.run(service.confirm_trust(config, every=True))
    if not asked:
        print("nothing to confirm: the workspace's files widen nothing", file=sys.stderr)
        return EXIT_OK
    print(f"confirmed {chosen} of {asked}", file=sys.stderr)
    return EXIT_OK
