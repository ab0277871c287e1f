"""The flags several commands share, worded once so that every `--help` says the same."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from typing import Any

TOOL_CALLING_MODES = ("auto", "native", "text")


def workspace(parser: argparse.ArgumentParser) -> None:
    """`--workspace`: the folder the command works in."""
    parser.add_argument("--workspace", default=".", help="workspace root (default: .)")


def endpoint(parser: argparse.ArgumentParser) -> None:
    """`--model` and `--base-url`: which model, where."""
    parser.add_argument("--model", help="model name (env TOOLGATE_MODEL)")
    parser.add_argument(
        "--base-url",
        help="OpenAI-compatible base URL (env OPENAI_BASE_URL; default: the config's, else "
        "the embedded model)",
    )


def profile(parser: argparse.ArgumentParser) -> None:
    """`--profile`: the agent's role."""
    parser.add_argument("--profile", help="developer, reviewer, or .agent/profiles/NAME.md")


def approve(
    parser: argparse.ArgumentParser,
    choices: Sequence[str] = ("ask", "auto", "deny"),
    help: str = "gated calls: ask on the terminal (default on a tty), approve file and git "
    "changes, or refuse all (default without a tty)",
    default: str | None = None,
) -> None:
    """`--approve`: what happens to the calls the gate holds for the person."""
    parser.add_argument("--approve", choices=list(choices), default=default, help=help)


def approval_mode(parser: argparse.ArgumentParser) -> None:
    """`--mode`: the approval mode, decided by what each tool does (toolgate.session.modes)."""
    parser.add_argument(
        "--mode",
        choices=("ask", "auto-edits", "read-only"),
        default="ask",
        help="ask: the configuration decides (default); auto-edits: apply file changes without "
        "asking; read-only: refuse every tool that is not a read (changes, tests, commands, "
        "git), and tell the model why. --approve answers what is still asked",
    )


def agent_limits(parser: argparse.ArgumentParser, max_steps: int | None = None) -> None:
    """`--max-steps` and `--tool-calling`: how long the agent may go on, and how it calls."""
    # Not read from the config's defaults here: importing the config would load the engine
    # into every command, `toolgate lsp` among them.
    default = max_steps or "the config's limits.max_steps"
    parser.add_argument(
        "--max-steps",
        type=int,
        default=max_steps,
        metavar="N",
        help=f"at most N steps, each a model answer and its calls (default: {default})",
    )
    parser.add_argument(
        "--tool-calling",
        choices=TOOL_CALLING_MODES,
        help="how tools are offered to the model: native tool calls, described in the "
        "prompt and read from the text, or found out (default: the config's, else auto)",
    )


def session_choice(parser: argparse.ArgumentParser) -> None:
    """`--session ID` or `--continue`: the conversation a turn belongs to."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="ID", help="continue this session")
    which.add_argument(
        "--continue",
        dest="continue_session",
        action="store_true",
        help="continue the session with the most recent activity",
    )


def listing(
    command: argparse.ArgumentParser, subcommands: Iterable[argparse.ArgumentParser]
) -> None:
    """`--workspace` and `--json` on a command that lists, and again on each of its subcommands."""
    workspace(command)
    command.add_argument("--json", action="store_true", help="print as JSON")
    # SUPPRESS: a flag given before the subcommand is kept, not reset to the default.
    for parser in subcommands:
        parser.add_argument("--workspace", default=argparse.SUPPRESS, help="workspace root")
        parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS)


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration the command-line flags set, in the TOML shape (flags win over files).

    The one place a flag becomes configuration. A command that has no such flag sets nothing
    for it: each is read only when the command's parser added it.
    """
    overrides: dict[str, Any] = {}
    model: dict[str, Any] = {}
    if getattr(args, "model", None):
        model["name"] = args.model
    if getattr(args, "base_url", None):
        model["base_url"] = args.base_url
    if model:
        overrides["model"] = model
    if getattr(args, "profile", None):
        overrides["profile"] = args.profile
    if getattr(args, "max_steps", None) is not None:
        overrides["limits"] = {"max_steps": args.max_steps}
    if getattr(args, "tool_calling", None):
        overrides["tool_calling"] = {"mode": args.tool_calling}
    return overrides
