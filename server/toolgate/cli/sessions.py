"""`toolgate sessions [list] | show ID | delete ID`: a workspace's conversations."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolgate.cli import flags
from toolgate.cli.workspace import workspace_root

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(sub: Any) -> None:
    """Register `sessions` and its `list`, `show` and `delete`."""
    sessions = sub.add_parser("sessions", help="list, show or delete the workspace's sessions")
    actions = sessions.add_subparsers(dest="sessions_command")
    listing = actions.add_parser("list", help="each session: id, last activity, turns, title")
    show = actions.add_parser("show", help="a session's turns as they were said")
    show.add_argument("session_id", metavar="ID")
    delete = actions.add_parser("delete", help="delete a session (its runs' logs stay)")
    delete.add_argument("session_id", metavar="ID")
    flags.listing(sessions, (listing, show, delete))
    sessions.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Do one `sessions` subcommand."""
    from toolgate.config import Config
    from toolgate.session import SessionError, SessionService

    root = workspace_root(args.workspace)
    if root is None:
        return EXIT_USAGE
    service = SessionService(root, Config)
    command = args.sessions_command or "list"
    try:
        if command == "show":
            return _show(service.load(args.session_id), args.json)
        if command == "delete":
            service.delete(args.session_id)
            print(f"deleted session {args.session_id}", file=sys.stderr)
            return EXIT_OK
    except SessionError as exc:
        print(f"toolgate: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return _list(service, args.json)


def _list(service: Any, as_json: bool) -> int:
    listed = [info.to_dict() for info in service.sessions()]
    if as_json:
        sys.stdout.write(json.dumps(listed, ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    for info in listed:
        noun = "turn " if info["turns"] == 1 else "turns"
        rewound = f" ({info['rewound']} rewound)" if info.get("rewound") else ""
        print(
            f"{info['id']}  {info['lastActivity']}  {info['turns']:3} {noun}{rewound}  "
            f"{info['title']}"
        )
    if not listed:
        print("no sessions in this workspace", file=sys.stderr)
    return EXIT_OK


def _show(session: dict[str, Any], as_json: bool) -> int:
    if as_json:
        sys.stdout.write(json.dumps(session, ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    print(f"session {session['id']}: {session['title'] or '(untitled)'}")
    print(f"created {session['created']}, last activity {session['lastActivity']}")
    for entry in session["transcript"]:
        kind = entry.get("kind")
        # A rewound turn is shown as it was said, marked: the model no longer sees it.
        mark = "[rewound] " if entry.get("rewound") else ""
        if kind == "user":
            print(f"\n{mark}you (turn {entry.get('turn')}, {entry.get('runId')}): {entry['text']}")
        elif kind == "assistant":
            print(f"{mark}assistant: {entry['text']}")
        elif kind == "tool":
            summary = f" — {entry['summary']}" if entry.get("summary") else ""
            print(f"  {mark}→ {entry.get('name')} [{entry.get('status')}]{summary}")
        elif kind in ("note", "rewind"):
            print(f"  ({entry['text']})")
    return EXIT_OK
