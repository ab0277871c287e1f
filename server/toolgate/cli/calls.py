"""`toolgate calls parse`: model text on stdin in, the parser's JSON out."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolgate.config import ToolCalling

EXIT_USAGE = 2


def register(sub: Any) -> None:
    """Add `calls` and its `parse` to the subcommands."""
    calls = sub.add_parser("calls", help="the text protocol")
    calls_sub = calls.add_subparsers(dest="calls_command", required=True)
    parse = calls_sub.add_parser("parse", help="parse model text from stdin into calls (JSON)")
    parse.add_argument("--tools", help="a schemas.json (default: the built-in tools)")
    parse.add_argument(
        "--workspace", default=".", help="read as a run there reads, with its config"
    )
    parse.add_argument(
        "--allow-deprecated",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="accept the deprecated short form <tool:NAME> (default: the config's "
        "tool_calling.allow_deprecated_syntax)",
    )
    calls.set_defaults(handler=main)


def default_tool_schemas() -> dict[str, dict[str, Any]]:
    """Tool name → argument schema of the built-in tools."""
    from toolgate.session.text_calls import builtin_tool_schemas

    return builtin_tool_schemas()


def schemas_from_tools(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tool name → argument schema from an OpenAI-style tools list (or bare tool objects)."""
    out: dict[str, dict[str, Any]] = {}
    for entry in tools:
        if not isinstance(entry, Mapping):
            raise ValueError("each tool must be a JSON object")
        fn = entry.get("function", entry)
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise ValueError("each tool needs a name")
        params = fn.get("parameters", fn.get("input_schema", {"type": "object"}))
        out[fn["name"]] = dict(params) if isinstance(params, Mapping) else {"type": "object"}
    return out


def load_tools_file(path: str) -> dict[str, dict[str, Any]]:
    """Read a schemas.json: an OpenAI tools list, or {"tools": [...]}."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(doc, Mapping):
        doc = doc.get("tools")
    if not isinstance(doc, list):
        raise ValueError('expected a list of tools or {"tools": [...]}')
    return schemas_from_tools(doc)


def calls_parse_main(
    stdin_text: str, tools_file: str | None, settings: ToolCalling
) -> tuple[dict[str, Any], int]:
    """The JSON for `toolgate calls parse`, and the exit code (2 when the tools file is bad).

    `settings` are the config's `tool_calling`: the text is read exactly as a run reads it.
    """
    from toolgate.session.text_calls import read_calls

    try:
        tools = load_tools_file(tools_file) if tools_file else default_tool_schemas()
    except (OSError, ValueError) as exc:
        return {"error": f"cannot read tools file {tools_file}: {exc}"}, 2
    return read_calls(stdin_text, tools, settings), 0


def main(args: argparse.Namespace) -> int:
    """`toolgate calls parse`: the calls in the model text on stdin, as JSON on stdout."""
    from toolgate.config import ConfigError, load_config
    from toolgate.session.assembly import check_trust

    root = Path(args.workspace).resolve()
    try:
        config = load_config(root)
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # The same confirmations a run applies, so a confirmed workspace syntax module is read here too.
    for notice in check_trust(root, config, asks_model=False):
        print(f"toolgate: {notice}", file=sys.stderr)
    calling = config.tool_calling
    if args.allow_deprecated is not None:
        calling.allow_deprecated_syntax = args.allow_deprecated
    payload, code = calls_parse_main(sys.stdin.read(), args.tools, calling)
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    return code
