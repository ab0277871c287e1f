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
    from toolgate.tools.builtins import builtin_registry
    from toolgate.tools.manifest import ManifestError
    from toolgate.tools.manifests import load_manifests

    registry = builtin_registry()
    root = Path(args.workspace).resolve()
    try:
        for tool, activity in load_manifests(root):  # the workspace's own tools, as a run has
            registry.add(tool, activity)
    except ManifestError as exc:
        _err(str(exc))
        return EXIT_FAILED
    target = Path(args.output) if args.output else root / ".agent" / "tools" / "schemas.json"
    registry.export(target)
    print(f"wrote {len(registry.names())} tool schemas to {target}", file=sys.stderr)
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    from toolgate.agent.policy import policy_for
    from toolgate.config import ConfigError, load_config
    from toolgate.tools.activity import CommandActivity
    from toolgate.tools.builtins import builtin_registry
    from toolgate.tools.manifest import ManifestError
    from toolgate.tools.manifests import load_manifests
    from toolgate.tools.yaml_manifest import EntrypointActivity, is_trusted

    root = Path(args.workspace).resolve()
    registry = builtin_registry()
    sources = {name: "built-in" for name in registry.names()}
    trusted: dict[str, bool] = {}
    try:
        for tool, activity in load_manifests(root):
            registry.add(tool, activity)
            if isinstance(activity, EntrypointActivity):
                sources[tool.name] = activity.manifest.source
                trusted[tool.name] = is_trusted(activity.manifest, root)
            else:
                sources[tool.name] = ".agent/tools"
    except ManifestError as exc:
        _err(str(exc))
        return EXIT_FAILED
    try:
        config = load_config(root)  # the workspace's approvals decide the gate column
    except ConfigError as exc:
        _err(f"configuration error: {exc}")
        return EXIT_USAGE
    policy = policy_for(config)
    rows: list[dict[str, Any]] = []
    for tool in (t for t in map(registry.get, registry.names()) if t is not None):
        # A program checked against the allow-list: what it does on it (off it, it is asked).
        argv = isinstance(registry.activity(tool.name), CommandActivity)
        decision = policy.decide(tool, command_allowed=True if argv else None)
        caps = tool.capabilities
        rows.append(
            {
                "name": tool.name,
                "gate": decision.value,
                "source": sources.get(tool.name, ""),
                "capabilities": list(caps),
                "trusted": trusted.get(tool.name, True),
                "summary": tool.summary,
                "argv_template": argv and tool.name not in trusted,
            }
        )
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
    from toolgate.tools.capabilities import manifest_files
    from toolgate.tools.manifest import ManifestError, load_manifest
    from toolgate.tools.yaml_manifest import read_manifest

    root = Path(args.workspace).resolve()
    if args.paths:
        targets = [(Path(p).resolve(), "workspace") for p in args.paths]
    else:
        targets = manifest_files(root)
    failures = 0
    for path, source in targets:
        try:
            if path.suffix == ".toml":
                tool, _ = load_manifest(path)
                name = tool.name
            else:
                name = read_manifest(path, "user" if source == "user" else "workspace").name
        except ManifestError as exc:
            failures += 1
            print(f"error  {exc}")
            continue
        print(f"ok     {name}  ({path})")
    if not args.paths:
        from toolgate.planning.workflow import WorkflowError, load_workflow, workflow_paths

        for path in workflow_paths(root):
            try:
                load_workflow(path)
            except WorkflowError as exc:
                failures += 1
                print(f"error  {exc}")
                continue
            print(f"ok     workflow {path.stem}  ({path})")
    if not targets:
        print("no manifests found", file=sys.stderr)
    return EXIT_FAILED if failures else EXIT_OK


def _resolve(args: argparse.Namespace) -> int:
    from toolgate.tools.capabilities import Contract, build_registry
    from toolgate.tools.manifest import ManifestError

    root = Path(args.workspace).resolve()
    try:
        registry = build_registry(root)
    except ManifestError as exc:
        _err(str(exc))
        return EXIT_FAILED
    contract = Contract(tuple(args.input), tuple(args.output))
    found = registry.resolve(args.capability, contract if args.input or args.output else None)
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
    from toolgate.tools.scaffold import ScaffoldError, scaffold
    from toolgate.tools.yaml_manifest import read_manifest
    from toolgate.trust import TrustStore

    root = Path(args.workspace).resolve()
    try:
        files = scaffold(
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
    manifest = read_manifest(files[0])
    # The person made it just now: this exact version is theirs. An edit asks again.
    TrustStore().confirm(root, [manifest.fingerprint])
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
    from toolgate.tools.manifest import ManifestError
    from toolgate.tools.yaml_manifest import is_trusted, load_tool_manifests
    from toolgate.trust import TrustStore

    root = Path(args.workspace).resolve()
    store = TrustStore()
    try:
        manifests = [m for m in load_tool_manifests(root, user=False)]
    except ManifestError as exc:
        _err(str(exc))
        return EXIT_FAILED
    unknown = set(args.names) - {m.name for m in manifests}
    if unknown:
        _err(f"no tool.yaml tool named {sorted(unknown)[0]!r} in {root / 'tools'}")
        return EXIT_USAGE
    pending = [
        m
        for m in manifests
        if (not args.names or m.name in args.names) and not is_trusted(m, root, store)
    ]
    chosen: list[str] = []
    for manifest in pending:
        line = (
            f"{manifest.name} {manifest.version} ({manifest.path}) runs "
            f"{' '.join(manifest.entrypoint)} with gate {manifest.gate}, "
            f"{manifest.idempotency}, needs {', '.join(manifest.dependencies) or 'nothing listed'}"
        )
        if args.yes:
            chosen.append(manifest.fingerprint)
            print(f"trusted: {line}")
            continue
        answer = input(f"{line}. Trust it? [y/N] ").strip().lower()
        if answer in ("y", "yes"):
            chosen.append(manifest.fingerprint)
    store.confirm(root, chosen)
    print(f"trusted {len(chosen)} of {len(pending)} tool(s)", file=sys.stderr)
    return EXIT_OK
