"""`toolgate chat`: talk to the agent turn by turn in the terminal (the loop: `cli.chat_loop`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toolgate.cli import flags
from toolgate.cli.workspace import workspace_root


def register(sub: Any) -> None:
    """Add `chat` to the subcommands."""
    chat = sub.add_parser("chat", help="talk to the agent turn by turn in the terminal")
    flags.workspace(chat)
    flags.endpoint(chat)
    flags.profile(chat)
    flags.agent_limits(chat)
    flags.session_choice(chat)
    chat.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Chat in the workspace, in a new session or the one --session or --continue names."""
    from toolgate.cli.chat_loop import run_chat
    from toolgate.config import ConfigError, load_config
    from toolgate.session import SessionError, SessionService

    root = workspace_root(args.workspace)
    if root is None:
        return 2
    try:
        config = load_config(root, overrides=flags.overrides(args))
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return 2
    service = SessionService(root, lambda: config)
    session_id = service.latest() if args.continue_session else args.session
    if session_id is not None:
        try:  # an unknown session is said before the first line is typed
            service.load(session_id)
        except SessionError as exc:
            print(f"toolgate: {exc}", file=sys.stderr)
            return 2
    return run_chat(root, config, session_id)
