"""Toolgate's gated tools as an MCP server: `toolgate mcp --workspace DIR [--approve deny|auto]`.

Another agent calls the built-in tools over stdio; each call goes through the engine's own Gate,
policy and sandbox. Nobody can be asked, so what would be asked is refused (`--approve deny`,
the default) or approved by the engine's AutoReviewer (`--approve auto`), which still refuses
any command off the allow-list. Every session is recorded as a run log in `.toolgate/runs/`.

With `--agent-tools` it also serves the agent itself (`toolgate.agent_tools`, adapted in
`mcp/agent_tools.py`): implement_code, review_code, run_tests (in place of the low-level one),
refactor_code and generate_documentation, each a run of its own.
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgate import __version__
from toolgate.agent.events import Event, EventBus
from toolgate.config import AGENT_TOOLS, Config, ConfigError, load_config
from toolgate.mcp import agent_tools as agent_mcp
from toolgate.mcp import sdk
from toolgate.mcp.convert import to_mcp
from toolgate.mcp.logs import CallLog, LogLevels, call_log
from toolgate.mcp.options import HttpOptions
from toolgate.records import ToolCall, ToolResult, new_id
from toolgate.review.reviewer import AutoReviewer, DenyReviewer
from toolgate.session import SessionService, check_trust, gated_calls

if TYPE_CHECKING:
    from toolgate.agent_tools import AgentJobs
    from toolgate.mcp.fixtures import ConformanceFixtures
from toolgate.tools.schema import READ, Tool
from toolgate.workspace import Workspace

log = logging.getLogger(__name__)

APPROVE_CHOICES = ("deny", "auto")


class GatedTools:
    """The built-in tools behind one gate, as an MCP session calls them."""

    def __init__(
        self, root: Path, config: Config, approve: str = "deny", bus: EventBus | None = None
    ) -> None:
        if approve not in APPROVE_CHOICES:
            raise ValueError(f"approve must be one of {APPROVE_CHOICES}, got {approve!r}")
        self.config = config
        self.bus = bus or EventBus()
        self.run_id = new_id("mcp")
        workspace = Workspace(root, max_file_bytes=config.limits.max_file_bytes)
        reviewer = AutoReviewer(workspace) if approve == "auto" else DenyReviewer(workspace)
        # The person started this server on their own workspace: it is trusted.
        calls = gated_calls(
            root, config, reviewer, self.bus, self.run_id, f"MCP session (--approve {approve})"
        )
        self.registry, self.gate, self.runlog = calls.registry, calls.gate, calls.runlog
        self._ids = itertools.count(1)

    def tools(self) -> list[Tool]:
        """The tools offered (deny-listed ones too: their calls say why they are refused)."""
        return list(self.registry)

    async def call(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """One call through validation and the gate; refusals are results, never exceptions."""
        return (await self.decide(name, arguments))[1]

    async def decide(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, ToolResult]:
        """One call through validation and the gate: the gate's decision, and the result."""
        number = next(self._ids)
        call = ToolCall(
            id=f"mcp-{number}", name=name, arguments=dict(arguments or {}), syntax="mcp"
        )
        error = self.registry.validate(name, call.arguments)
        if error is not None:
            outcome = self.gate.invalid(call, error)
        else:
            outcome = await self.gate.handle(call)
        step = self.runlog.begin_step(number)
        self.runlog.record_call(
            step,
            {
                "id": call.id,
                "name": name,
                "arguments": outcome.arguments,
                "reasoning": outcome.reasoning,
                "syntax": "mcp",
                "decision": outcome.decision,
                "proposal_id": outcome.proposal_id,
                "result": outcome.result.to_dict(),
            },
        )
        self.runlog.save()
        return outcome.decision, outcome.result

    def finish(self) -> None:
        """Close the session's run log."""
        self.runlog.finish("completed", None, {})

    @property
    def max_output_bytes(self) -> int:
        """What one result may weigh once turned into text."""
        return self.config.tool_calling.retention.max_output_bytes


def _mcp_tool(tool: Tool) -> Any:
    import mcp_types as types

    return types.Tool(
        name=tool.name,
        description=tool.description,
        # `_reasoningForCall` stays accepted: a caller may say why, and the run log keeps it.
        input_schema=tool.model_parameters(),
        annotations=types.ToolAnnotations(
            read_only_hint=tool.kind == READ,
            destructive_hint=tool.kind != READ,
            open_world_hint=False,
        ),
    )


def _decision_line(name: str, decision: str, result: ToolResult) -> tuple[str, str]:
    """The log line of one low-level call: the gate's decision, and how the call ended."""
    if result.success:
        return "info", f"{name}: {decision}, done"
    return "warning", f"{name}: {decision}, failed: {result.error}"


def build_server(
    tools: GatedTools,
    jobs: AgentJobs | None = None,
    fixtures: ConformanceFixtures | None = None,
) -> Any:
    """The MCP low-level server that lists and calls the gated tools (and the agent tools).

    It declares `logging`: each call's lines (the gate's decision, an agent tool's progress)
    go to its session at the level it set (`mcp/logs.py`). With `fixtures`, the conformance
    suite's fixture tools are listed and called beside the others, through the same handlers.
    """
    import warnings

    import mcp_types as types
    from mcp.server.lowlevel import Server

    levels = LogLevels()

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        # An agent tool takes the place of the built-in of its name (run_tests: the whole job).
        offered = [t for t in tools.tools() if jobs is None or t.name not in AGENT_TOOLS]
        listed = [_mcp_tool(t) for t in offered]
        if jobs is not None:
            listed += [agent_mcp.mcp_tool(spec) for spec in jobs.specs()]
        if fixtures is not None:
            listed += fixtures.tools()
        return types.ListToolsResult(tools=listed)

    agent_calls = None if jobs is None else agent_mcp.AgentToolCalls(jobs, tools.max_output_bytes)

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        async with call_log(ctx, levels) as say:
            return await _call(ctx, params, say)

    async def _call(ctx: Any, params: Any, say: CallLog) -> Any:
        if fixtures is not None and params.name in fixtures.names():
            return await fixtures.call(ctx, params, say)
        if agent_calls is not None and params.name in AGENT_TOOLS:
            if not agent_calls.jobs.offers(params.name):
                return to_mcp(
                    ToolResult.fail(f"unknown tool {params.name!r}: it is switched off here"),
                    tools.max_output_bytes,
                )
            return await agent_calls.call(ctx, params, lambda line: say("info", line))
        decision, result = await tools.decide(params.name, params.arguments)
        say(*_decision_line(params.name, decision, result))
        return to_mcp(result, tools.max_output_bytes)

    with warnings.catch_warnings():
        # The SDK warns that protocol 2026-07-28 drops `logging`; the older ones have it.
        warnings.simplefilter("ignore")
        return Server(
            "toolgate",
            version=__version__,
            instructions=(
                "Toolgate's workspace tools. Paths are relative to the workspace root; every call "
                "passes Toolgate's gate, and a refused call comes back as an error result saying "
                "why."
            ),
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_set_logging_level=levels.on_set_level,
        )


def _say(line: str) -> None:
    print(f"toolgate: {line}", file=sys.stderr, flush=True)


async def _serve(
    tools: GatedTools, jobs: AgentJobs | None, server: Any, http: HttpOptions | None
) -> None:
    try:
        if http is None:
            from mcp.server.stdio import stdio_server

            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        else:
            from toolgate.mcp.http_server import serve_http

            await serve_http(server, http.host, http.port, _say, os.environ)
    finally:
        tools.finish()
        if jobs is not None:
            await jobs.service.close()


def _log_event(event: Event) -> None:
    log.debug("%s", event.to_dict())


def serve(
    root: Path,
    approve: str = "deny",
    *,
    agent_tools: bool = False,
    overrides: dict[str, Any] | None = None,
    http: HttpOptions | None = None,
    conformance_fixtures: bool = False,
) -> int:
    """Serve until the client closes stdin (over HTTP: until interrupted); the exit code."""
    if not sdk.available():
        print(f"toolgate: {sdk.MISSING}", file=sys.stderr)
        return 2
    if not root.is_dir():
        print(f"toolgate: workspace {str(root)!r} is not a folder", file=sys.stderr)
        return 2
    service = SessionService(
        root,
        lambda: load_config(root, overrides=overrides),
        notice=lambda message: print(f"toolgate: {message}", file=sys.stderr),
    )
    try:
        config = service.config()
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return 2
    # The low-level tools ask no model; each agent tool's run checks its base URL itself.
    for notice in check_trust(root, config, asks_model=False):
        print(f"toolgate: {notice}", file=sys.stderr)
    bus = EventBus()
    bus.subscribe(_log_event)
    tools = GatedTools(root, config, approve, bus)
    jobs = None
    if agent_tools:
        from toolgate.agent_tools import agent_jobs

        jobs = agent_jobs(root, service, approve)
    import anyio

    from toolgate.mcp.fixtures import ConformanceFixtures

    server = build_server(tools, jobs, ConformanceFixtures() if conformance_fixtures else None)
    try:
        anyio.run(_serve, tools, jobs, server, http)
    except OSError as exc:
        if http is None:
            raise
        # The address is taken, or not this machine's.
        _say(f"cannot listen on {http.host}:{http.port}: {exc}")
        return 2
    return 0
