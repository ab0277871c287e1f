"""`toolgate tools …`: list, validate, resolve, scaffold and trust the tools."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from toolgate.cli import flags

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(sub: Any) -> None:
    """Add `tools` and its subcommands to the subcommands."""
    tools = sub.add_parser("tools", help="list, validate, resolve, scaffold and trust tools")
    tools_sub = tools.add_subparsers(dest="tools_command", required=True)
    export = tools_sub.add_parser("export", help="write .agent/tools/schemas.json")
    flags.workspace(export)
    export.add_argument("--output", help="file to write (default .agent/tools/schemas.json)")
    listing = tools_sub.add_parser("list", help="each tool, its gate default and capabilities")
    flags.workspace(listing)
    listing.add_argument("--json", action="store_true", help="print as JSON")
    validate = tools_sub.add_parser("validate", help="check every manifest and workflow")
    validate.add_argument("paths", nargs="*", help="tool.yaml files (default: all of them)")
    flags.workspace(validate)
    resolve = tools_sub.add_parser("resolve", help="which tool provides a capability")
    resolve.add_argument("capability", help="domain.action, as in a manifest's capabilities")
    resolve.add_argument("--input", action="append", default=[], help="an input the step gives")
    resolve.add_argument("--output", action="append", default=[], help="an output it needs")
    flags.workspace(resolve)
    resolve.add_argument("--json", action="store_true", help="print the match as JSON")
    new = tools_sub.add_parser("new", help="scaffold tools/NAME: manifest, entrypoint, test")
    new.add_argument("name", help="the tool's name (the folder tools/NAME)")
    new.add_argument("--capability", required=True, help="what it provides (domain.action)")
    new.add_argument(
        "--language",
        choices=["python", "shell"],
        default="python",
        help="the entrypoint's language (default: python)",
    )
    new.add_argument("--input", action="append", default=[], help="an input field (repeatable)")
    new.add_argument("--output", action="append", default=[], help="an output field")
    new.add_argument("--description", help="one line on what it does, shown to the model")
    flags.workspace(new)
    trust = tools_sub.add_parser("trust", help="trust the workspace's tool.yaml tools as they are")
    trust.add_argument("names", nargs="*", help="tools to trust (default: every untrusted one)")
    flags.workspace(trust)
    trust.add_argument("--yes", action="store_true", help="trust without asking")
    tools.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Run one `tools` subcommand."""
    handler = {
        "export": _export,
        "list": _list,
        "validate": _validate,
        "resolve": _resolve,
        "new": _new,
        "trust": _trust,
    }[args.tools_command]
    return handler(args)


def _err(message: str) -> None:
    print(f"toolgate: {message}", file=sys.stderr)


def _export(args: argparse.Namespace) -> int:
    from toolgate.session import ManifestError
    from toolgate.session.workspace_tools import export_schemas

    root = Path(args.workspace).resolve()
    target = Path(args.output) if args.output else root / ".agent" / "tools" / "schemas.json"
    try:
        count = export_schemas(root, target)
    except ManifestError as exc:
        _err(str(exc))
        return EXIT_FAILED
    print(f"wrote {count} tool schemas to {target}", file=sys.stderr)
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    from toolgate.config import ConfigError, load_config
    from toolgate.session import ManifestError
    from toolgate.session.workspace_tools import tool_rows

    root = Path(args.workspace).resolve()
    try:
        rows = tool_rows(root, lambda: load_config(root))
    except ManifestError as exc:
        _err(str(exc))
        return EXIT_FAILED
    except ConfigError as exc:
        _err(f"configuration error: {exc}")
        return EXIT_USAGE
    if args.json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return EXIT_OK
    for row in rows:
        mark = "*" if row["argv_template"] else " "
        note = "" if row["trusted"] else "  (untrusted: toolgate tools trust)"
        print(
            f"{row['name']:16} {row['gate']:5}{mark} {row['source']:12} "
            f"{','.join(row['capabilities']) or '-':20} {row['summary']}{note}"
        )
    print(
        "* auto only for commands on the allow-list; any other command is asked for, "
        "by its exact argv"
    )
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    from toolgate.session.workspace_tools import check_tools

    checked = check_tools(Path(args.workspace).resolve(), args.paths)
    for item in checked:
        if item.error is not None:
            print(f"error  {item.error}")
        elif item.workflow:
            print(f"ok     workflow {item.name}  ({item.path})")
        else:
            print(f"ok     {item.name}  ({item.path})")
    if all(item.workflow for item in checked):
        print("no manifests found", file=sys.stderr)
    return EXIT_FAILED if any(item.error is not None for item in checked) else EXIT_OK


def _resolve(args: argparse.Namespace) -> int:
    from toolgate.session import ManifestError
    from toolgate.session.workspace_tools import resolve_capability

    root = Path(args.workspace).resolve()
    try:
        found = resolve_capability(root, args.capability, args.input, args.output)
    except ManifestError as exc:
        _err(str(exc))
        return EXIT_FAILED
    if args.json:
        doc = {
            "capability": found.capability,
            "tool": found.provider.to_dict() if found.provider else None,
            "reason": found.reason,
            "reason_message": found.message,
            "reason_details": found.details,
            "candidates": [p.name for p in found.candidates],
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif found.provider is not None:
        p = found.provider
        others = [c.name for c in found.candidates if c.name != p.name]
        print(f"{found.capability} -> {p.name}  ({p.source}, {p.stability}, priority {p.priority})")
        if others:
            print(f"  also: {', '.join(others)}")
    else:
        print(f"{found.capability}: no tool ({found.reason}): {found.message}")
        for name, problems in found.details.get("candidates", {}).items():
            for problem in problems:
                print(f"  {name}: {problem}")
    return EXIT_OK if found.provider is not None else EXIT_FAILED


def _new(args: argparse.Namespace) -> int:
    from toolgate.session.workspace_tools import ScaffoldError, scaffold_tool

    root = Path(args.workspace).resolve()
    try:
        made = scaffold_tool(
            root,
            args.name,
            args.capability,
            language=args.language,
            inputs=args.input,
            outputs=args.output,
            description=args.description,
        )
    except ScaffoldError as exc:
        _err(str(exc))
        return EXIT_USAGE
    files, manifest = made.files, made.manifest
    for path in files:
        print(f"wrote {path.relative_to(root)}")
    print(
        f"{manifest.name} provides {', '.join(manifest.capabilities)}; edit "
        f"{files[1].relative_to(root)}, then `toolgate tools validate` and "
        f"`toolgate tools trust {manifest.name}`",
        file=sys.stderr,
    )
    return EXIT_OK


def _trust(args: argparse.Namespace) -> int:
    from toolgate.session import ManifestError
    from toolgate.session.workspace_tools import trust_tools, untrusted_tools

    root = Path(args.workspace).resolve()
    try:
        pending = untrusted_tools(root, args.names)
    except ManifestError as exc:
        _err(str(exc))
        return EXIT_FAILED
    except KeyError as exc:
        _err(f"no tool.yaml tool named {exc.args[0]!r} in {root / 'tools'}")
        return EXIT_USAGE
    chosen = []
    for manifest in pending:
        line = (
            f"{manifest.name} {manifest.version} ({manifest.path}) runs "
            f"{' '.join(manifest.entrypoint)} with gate {manifest.gate}, "
            f"{manifest.idempotency}, needs {', '.join(manifest.dependencies) or 'nothing listed'}"
        )
        if args.yes:
            chosen.append(manifest)
            print(f"trusted: {line}")
            continue
        answer = input(f"{line}. Trust it? [y/N] ").strip().lower()
        if answer in ("y", "yes"):
            chosen.append(manifest)
    trust_tools(root, chosen)
    print(f"trusted {len(chosen)} of {len(pending)} tool(s)", file=sys.stderr)
    return EXIT_OK
