"""The `toolgate` command and its subcommands (run, sessions, lsp, acp, mcp, tools, plan, …)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from toolgate import __version__, cli_review, cli_runs, cli_sessions, cli_tools, cli_undo
from toolgate import cli_flags as flags
from toolgate.cli_workspace import workspace_root
from toolgate.mcp import options as mcp_options

EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

RUN_EPILOG = """\
example:
  toolgate run "Fix the failing test in tests/test_parse.py" --model qwen2.5-coder \\
      --base-url http://127.0.0.1:8080/v1

exit status:
  0    completed: the model ended the run, its last change landed and its last
       command was not refused
  1    incomplete: the last gated call was refused, or the last change failed, and
       nothing landed after it, or the last test run did not run its tests, or
       the model's last tool call was written as text and never ran, or the
       model refused the task; or failed,
       limit_reached, blocked_by_policy,
       cancelled (the last line says which)
  2    usage or configuration error (nothing was sent to the model)
  130  interrupted with Ctrl-C

environment:
  TOOLGATE_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY, NO_COLOR
"""


def _verbosity() -> argparse.ArgumentParser:
    # A parent parser, so that -v is read after the subcommand as well as before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="Toolgate's debug log on stderr",
    )
    return common


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolgate",
        description="A coding agent whose every tool call passes a gate: reads run at once, "
        "changes wait for your yes, nothing runs through a shell or leaves the workspace.",
        epilog='start with: toolgate run "Fix the failing test" (or toolgate chat, toolgate '
        "demo); toolgate COMMAND --help for each command",
    )
    parser.add_argument("--version", action="version", version=f"toolgate {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="Toolgate's debug log on stderr"
    )
    sub = parser.add_subparsers(dest="command")
    common = _verbosity()
    _add = sub.add_parser

    def add_parser(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return _add(name, parents=[common, *kwargs.pop("parents", [])], **kwargs)

    sub.add_parser = add_parser  # type: ignore[method-assign]  # argparse has no hook for parents shared by every subcommand

    run = sub.add_parser(
        "run",
        help="run the agent on a task in a workspace (headless)",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("task", help="what the agent should do")
    flags.workspace(run)
    flags.endpoint(run)
    flags.profile(run)
    flags.approve(run)
    flags.approval_mode(run)
    flags.agent_limits(run)
    run.add_argument("--json", action="store_true", help="print events as JSON lines on stdout")
    run.add_argument(
        "--review-loop",
        action="store_true",
        help="implement, have the model review the change, implement again with its comments "
        "(up to review.max_rounds reviews), then run the tests",
    )
    run.add_argument("--llm-log", metavar="FILE", help="write every model request and response")
    flags.session_choice(run)

    chat = sub.add_parser("chat", help="talk to the agent turn by turn in the terminal")
    flags.workspace(chat)
    flags.endpoint(chat)
    flags.profile(chat)
    flags.agent_limits(chat)
    flags.session_choice(chat)

    cli_sessions.add_parser(sub)
    cli_runs.add_parser(sub)

    lsp = sub.add_parser("lsp", help="serve the language server (stdio by default)")
    lsp.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")

    cli_tools.add_parsers(sub)
    cli_undo.add_parser(sub)
    cli_review.add_parser(sub)

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

    demo = sub.add_parser("demo", help="run the agent on a throw-away project and show each step")
    demo.add_argument("--model", help="model name (default: the endpoint's own)")
    demo.add_argument(
        "--base-url", help="OpenAI-compatible base URL (default: the embedded local model)"
    )
    flags.approve(
        demo, ("ask", "auto"), "review each change yourself, or let the demo approve them", "auto"
    )
    flags.agent_limits(demo, max_steps=12)

    mcp = sub.add_parser("mcp", help="serve the gated tools to other agents over MCP (stdio, HTTP)")
    flags.workspace(mcp)
    flags.approve(
        mcp,
        ("deny", "auto"),
        default="deny",
        help="gated calls: refuse them (default), or approve file and git changes "
        "(commands off the allow-list are refused either way); with --agent-tools, what a "
        "client that cannot ask its person (no elicitation) gets",
    )
    mcp.add_argument(
        "--agent-tools",
        action="store_true",
        help="also serve the agent itself: implement_code, review_code, run_tests, "
        "refactor_code, generate_documentation",
    )
    flags.endpoint(mcp)  # for the agent tools
    mcp_options.add_arguments(mcp)  # --http, --host, --port, --conformance-fixtures

    acp = sub.add_parser("acp", help="serve the Agent Client Protocol on stdio (Zed, JetBrains, …)")
    flags.endpoint(acp)
    flags.profile(acp)

    doctor = sub.add_parser("doctor", help="check that a run can start here, and how to fix it")
    flags.workspace(doctor)
    flags.endpoint(doctor)
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.add_argument("--no-self-check", action="store_true", help="skip the embedded model's")
    model_sub = sub.add_parser("model", help="the embedded local model")
    model_sub.add_subparsers(dest="model_command", required=True).add_parser(
        "install", help="install it into this Python, with the portable build and a self-check"
    )

    config_parser = sub.add_parser("config", help="what shapes the agent here, and where from")
    show = config_parser.add_subparsers(dest="config_command", required=True).add_parser(
        "show", help="rules, skills, commands, hooks and MCP servers found, with their sources"
    )
    flags.workspace(show)
    show.add_argument("--json", action="store_true", help="print it as JSON")

    trust = sub.add_parser("trust", help="confirm settings that the workspace's files widen")
    flags.workspace(trust)
    trust.add_argument("--yes", action="store_true", help="confirm all without asking")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else EXIT_USAGE
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    # Checked once for every command, before any of them reads, writes or serves there.
    if getattr(args, "workspace", None) is not None and workspace_root(args.workspace) is None:
        return EXIT_USAGE
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.verbose:
        # Toolgate's and the protocol's debug lines; the HTTP libraries' would bury them.
        for name in ("httpcore", "httpcore2", "httpx", "openai", "asyncio", "anyio", "urllib3"):
            logging.getLogger(name).setLevel(logging.WARNING)
    if args.command == "run":
        return _run(args)
    if args.command == "chat":
        from toolgate.chat import chat_main

        return chat_main(args)
    if (
        args.command in ("lsp", "mcp", "acp")
        and sys.stdin.isatty()
        and not getattr(args, "http", False)
    ):
        print(
            f"toolgate {args.command}: waiting for a client on stdio "
            "(an editor or agent starts this itself; Ctrl-C to stop)",
            file=sys.stderr,
        )
    if args.command == "lsp":
        from toolgate.lsp.server import serve

        return serve(tcp=args.tcp)
    if args.command in cli_tools.COMMANDS:
        return cli_tools.main(args)
    if args.command == "calls":
        return _calls_parse(args)
    if args.command == "undo":
        return cli_undo.main(args)
    if args.command == "review":
        return cli_review.main(args)
    if args.command == "trust":
        return _trust(args)
    if args.command == "sessions":
        return cli_sessions.main(args)
    if args.command == "runs":
        return cli_runs.main(args)
    if args.command == "demo":
        return _demo(args)
    if args.command == "config":
        from toolgate.cli_config import config_show_main

        return config_show_main(args, {})
    if args.command == "doctor":
        from toolgate.setup import doctor

        args.profile = args.max_steps = args.tool_calling = None
        return doctor.main(args, flags.overrides(args))
    if args.command == "model":
        from toolgate.setup import model_install

        return model_install.main()
    if args.command == "mcp":
        from toolgate.mcp.server import serve as serve_mcp

        args.profile = args.max_steps = args.tool_calling = None
        return serve_mcp(
            Path(args.workspace).resolve(),
            args.approve,
            agent_tools=args.agent_tools,
            overrides=flags.overrides(args),
            http=mcp_options.http_options(args),
            conformance_fixtures=args.conformance_fixtures,
        )
    if args.command == "acp":
        from toolgate.acp import serve as serve_acp

        args.max_steps = args.tool_calling = None
        return serve_acp(flags.overrides(args))
    return EXIT_USAGE


def _calls_parse(args: argparse.Namespace) -> int:
    from toolgate.cli_calls import calls_parse_main
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


def _run(args: argparse.Namespace) -> int:
    from toolgate.config import ConfigError, load_config
    from toolgate.session import SessionError, SetupError

    root = workspace_root(args.workspace)
    if root is None:
        return EXIT_USAGE
    if not args.task.strip():
        print("toolgate: the task is empty: say what the agent should do", file=sys.stderr)
        return EXIT_USAGE
    try:
        config = load_config(root, overrides=flags.overrides(args))
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    approve = args.approve or ("ask" if sys.stdin.isatty() else "deny")
    from toolgate.model.llm_log import enable_for

    enable_for(root, getattr(args, "llm_log", None))
    session_id = getattr(args, "session", None)
    latest = getattr(args, "continue_session", False)
    try:
        return asyncio.run(
            _run_async(
                root,
                config,
                args.task,
                approve,
                args.json,
                session_id,
                latest,
                review_loop=getattr(args, "review_loop", False),
                mode=getattr(args, "mode", "ask"),
            )
        )
    except SessionError as exc:
        print(f"toolgate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SetupError as exc:
        print(f"toolgate: {exc}", file=sys.stderr)
        return EXIT_RUN_FAILED if exc.blocked else EXIT_USAGE
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("toolgate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


async def _run_async(
    root: Path,
    config: Any,
    task: str,
    approve: str,
    json_lines: bool,
    session_id: str | None = None,
    latest: bool = False,
    endpoint: Any = None,
    review_loop: bool = False,
    mode: str = "ask",
) -> int:
    from toolgate.agent.events import EventBus
    from toolgate.review.reviewer import AutoReviewer, DenyReviewer
    from toolgate.session import SessionError, SessionService
    from toolgate.session.mentions import IN_TERMINAL, Pointed
    from toolgate.terminal import Printer, TerminalReviewer
    from toolgate.workspace import Workspace

    bus = EventBus()
    printer = Printer(json_lines=json_lines, show_diffs=approve != "ask")
    bus.subscribe(printer)
    workspace = Workspace(root, max_file_bytes=config.limits.max_file_bytes)
    reviewer = {"ask": TerminalReviewer, "auto": AutoReviewer, "deny": DenyReviewer}[approve](
        workspace
    )
    service = SessionService(
        root, lambda: config, notice=lambda message: print(message, file=sys.stderr)
    )
    service.set_mode(mode)
    if latest:
        session_id = service.latest()
        if session_id is None:
            raise SessionError(f"no session to continue in {root}")
    if review_loop:
        try:
            return await cli_review.review_loop(service, config, task, reviewer, bus, session_id)
        finally:
            await service.close()
    claim = service.claim(session_id, new=session_id is None)
    try:
        outcome = await service.turn(
            claim,
            task,
            config=config,
            reviewer=reviewer,
            bus=bus,
            endpoint=endpoint,
            pointed=Pointed(unavailable=IN_TERMINAL),
        )
    finally:
        await service.close()
    print(f"toolgate: session {claim.session_id}", file=sys.stderr)
    # On a terminal the answer was streamed to the screen already; a pipe gets it once, clean.
    if outcome.answer and not json_lines and not sys.stdout.isatty():
        print(outcome.answer)
    return EXIT_OK if outcome.status == "completed" else EXIT_RUN_FAILED


def _demo(args: argparse.Namespace) -> int:
    import tempfile

    from toolgate.config import ConfigError, load_config
    from toolgate.session import SetupError

    args.profile = None
    try:
        # The demo project has no settings of its own: the person's and the flags' only.
        with tempfile.TemporaryDirectory(prefix="toolgate-demo-config-") as empty:
            config = load_config(Path(empty), overrides=flags.overrides(args))
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(_demo_async(args, config))
    except SetupError as exc:
        print(f"toolgate demo: {exc}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("toolgate demo: interrupted", file=sys.stderr)
        return EXIT_RUN_FAILED


async def _demo_async(args: argparse.Namespace, config: Any) -> int:
    from toolgate.demo import DEMO_TASK, make_workspace, model_unreachable, summary
    from toolgate.session import resolve_endpoint

    # The model first: a demo that cannot reach one stops before it makes anything.
    endpoint = await resolve_endpoint(config, lambda m: print(m, file=sys.stderr))
    try:
        problem = await model_unreachable(endpoint.base_url, config.api_key)
        if problem is not None:
            print(f"toolgate demo: {problem}", file=sys.stderr)
            return EXIT_RUN_FAILED
        root = make_workspace()
        print(f"toolgate demo: a throw-away project in {root}", file=sys.stderr)
        print(f"toolgate demo: the task — {DEMO_TASK}\n", file=sys.stderr)
        code = await _run_async(root, config, DEMO_TASK, args.approve, False, endpoint=endpoint)
    finally:
        if endpoint.close is not None:
            await endpoint.close()
    print("\n" + summary(root), file=sys.stderr)
    runs = root / ".toolgate" / "runs"
    if runs.is_dir() and any(runs.iterdir()):
        print(f"toolgate demo: the run log is in {runs}", file=sys.stderr)
    if code != EXIT_OK:
        print("toolgate demo: the run did not complete (see its last line above)", file=sys.stderr)
    return code


def _trust(args: argparse.Namespace) -> int:
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
