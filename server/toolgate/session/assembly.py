"""Assemble a run from configuration: config + workspace + reviewer → AgentRun."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import openai

from toolgate.agent.events import NOTICE, RULES_USED, TESTS_FINISHED, EventBus
from toolgate.agent.gate import Gate
from toolgate.agent.loop import AgentRun
from toolgate.agent.policy import ASK, policy_for
from toolgate.agent.prompt import (
    Instructions,
    Profile,
    load_instructions,
    load_profile,
    system_prompt,
    wants_compact,
)
from toolgate.agent.redact import Redactor
from toolgate.agent.runlog import RunLog
from toolgate.config import Config, ConfigError, apply_trust
from toolgate.conversation.budget import DEFAULT_CONTEXT_TOKENS, Budget
from toolgate.conversation.history import Conversation
from toolgate.conversation.window import endpoint_context_tokens
from toolgate.mcp.client import McpConnection, add_mcp_tools, close_all, servers_to_start
from toolgate.model.client import ModelSettings, OpenAIChatModel
from toolgate.review.reviewer import Reviewer
from toolgate.runner.allowlist import parse_allowed
from toolgate.session.customization import (
    RunCustomization,
    always_digests,
    expand_command,
    fit_rules,
    offer_skills,
    prompt_context,
)
from toolgate.session.latent_tools import add_latent_tools, latent_answers
from toolgate.session.mentions import Pointed, attach
from toolgate.testing.verdict import not_run_reason
from toolgate.tools.activity import Activity, ActivityContext, ActivitySettings
from toolgate.tools.builtins import builtin_registry
from toolgate.tools.manifest import ManifestError
from toolgate.tools.manifests import load_manifests
from toolgate.tools.registry import ToolRegistry as ToolRegistry  # what turn(registry=…) takes
from toolgate.tools.schema import Tool
from toolgate.trust import TrustStore
from toolgate.workspace import Workspace
from toolgate.workspace.sandbox import Buffers

NO_ENDPOINT = (
    "no model endpoint configured: pass --base-url URL (or set OPENAI_BASE_URL, or "
    "[tool.toolgate.model] base_url), or install the embedded local model with "
    "toolgate model install (toolgate doctor says what else it finds)"
)


SMALL_MODEL_ROLE = (
    "You are a coding agent working in the person's project. Do the task step by step with "
    "the tools: one tool block per answer. The person reviews every change."
)


class SetupError(Exception):
    """The run cannot start; the message says why in one line."""

    def __init__(self, message: str, *, blocked: bool = False) -> None:
        super().__init__(message)
        self.blocked = blocked


@dataclass
class Endpoint:
    """Where the model is, and what to stop when done."""

    base_url: str
    model: str | None
    description: str | None = None
    close: Callable[[], Awaitable[None]] | None = None
    # The tool-calling mode known to work best with this endpoint (used when the config says
    # "auto"): the embedded model calls tools far more reliably through the text protocol.
    preferred_mode: str | None = None
    small_model: bool = False  # short prompts: a compact tool list and a short role
    context_tokens: int | None = None  # the window the endpoint serves, once known
    probed: bool = False  # whether the endpoint was asked for its window
    # Builds a grammar (GBNF) from the offered tools that the endpoint constrains text-mode
    # answers with (the embedded model: prose and well-formed tool blocks).
    grammar: Callable[[list[dict[str, Any]]], str] | None = None
    # The form of structured output the endpoint takes, when known before it is asked (the
    # embedded model: llama-cpp-python answers `json_schema` with HTTP 500).
    structured_output: str | None = None


@dataclass
class RunSetup:
    """Everything a front end passes in, beyond the configuration."""

    root: Path
    config: Config
    reviewer: Reviewer
    bus: EventBus = field(default_factory=EventBus)
    registry: ToolRegistry | None = None
    buffers: Buffers | None = None
    trusted: bool = True
    on_test_run: Callable[[Any], None] | None = None
    conversation: Conversation | None = None  # the session the run continues; None: a fresh one
    mode: str = ASK  # the approval mode (session.modes): read-only, ask, auto-edits
    # What the front end knows beyond the words for `@selection`, `@problems` and attached
    # resources (session.mentions); None: a front end with no editor behind it.
    pointed: Pointed | None = None


def check_trust(
    root: Path, config: Config, store: TrustStore | None = None, *, asks_model: bool = True
) -> list[str]:
    """Apply remembered confirmations; returns notices about what is still held back.

    Raises SetupError when a workspace file's base URL would receive the API key unconfirmed
    (unless nothing will ask the model: `asks_model=False`, as when serving tools over MCP).
    """
    store = store or TrustStore()
    pending = apply_trust(config, store.confirmed(root))
    notices = []
    for item in pending:
        if item.kind == "base_url" and not asks_model:
            continue
        if item.kind == "base_url":
            if config.api_key:
                raise SetupError(
                    f"{item.describe()}, which you have not confirmed. Confirm it once with "
                    f"`toolgate trust --workspace {root}` or pass --base-url yourself."
                )  # a configuration matter, settled before the model is asked: exit 2
        else:
            notices.append(f"ignored until you confirm it (`toolgate trust`): {item.describe()}")
    return notices


async def resolve_endpoint(config: Config, notice: Callable[[str], None]) -> Endpoint:
    """The configured endpoint, else the embedded local model, else a clear error."""
    if config.model.base_url:
        return Endpoint(config.model.base_url, config.model.name)
    try:
        from toolgate.model.local_assets import local_runtime_available
    except ImportError:  # pragma: no cover - the module ships with the package
        raise SetupError(NO_ENDPOINT) from None
    missing = local_runtime_available()
    if missing:
        raise SetupError(NO_ENDPOINT)
    from toolgate.model.local import LocalModelServer

    server = LocalModelServer()
    await server.start()
    notice(server.description)
    return Endpoint(
        server.base_url,
        server.model,
        server.description,
        server.stop,
        preferred_mode="text",
        small_model=True,
        context_tokens=server.n_ctx,
        probed=True,
        grammar=server.tool_grammar if server.constrained else None,
        structured_output="json_object",
    )


def model_settings(config: Config, endpoint: Endpoint, **extra: Any) -> ModelSettings:
    """The model client's settings for an endpoint, from the configuration (plus `extra`)."""
    return ModelSettings(
        model=endpoint.model or "",
        base_url=endpoint.base_url,
        api_key=config.api_key,
        stream=config.model.stream,
        temperature=config.model.temperature,
        max_tokens=config.model.max_tokens,
        timeout_seconds=config.model.timeout_seconds,
        structured_output=endpoint.structured_output,
        **extra,
    )


async def pick_model(client: OpenAIChatModel) -> str:
    """The endpoint's first listed model, for servers that serve just one."""
    try:
        served = await client.served_models()
    except openai.APIConnectionError as exc:
        raise SetupError(
            f"cannot reach the model at {client.base_url} to ask which models it serves: {exc}",
            blocked=True,
        ) from None
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            raise SetupError(
                f"the model endpoint {client.base_url} refused the API key "
                f"(HTTP {exc.status_code})",
                blocked=True,
            ) from None
        served = []
    except Exception:  # a server without /models: the person names the model
        served = []
    for model in served:
        return model
    raise SetupError("no model configured: pass --model NAME (or set TOOLGATE_MODEL)")


def tools_with(*own: tuple[Tool, Activity]) -> ToolRegistry:
    """The built-in tools and a front end's own (ACP's update_plan), for `turn(registry=…)`.

    What a turn offers before its profile and policy narrow it; a front end also draws the
    calls of a kept transcript from it.
    """
    registry = builtin_registry()
    for tool, activity in own:
        registry.add(tool, activity)
    return registry


async def build_registry(
    config: Config,
    root: Path,
    base: ToolRegistry | None,
    profile_tools: list[str] | None,
    trusted: bool = True,
    person: object = None,
) -> tuple[ToolRegistry, list[McpConnection]]:
    """The tools this run offers, narrowed by profile and policy, and its open MCP sessions.

    The tools are the built-ins, the manifests' and the MCP servers'; the sessions opened to
    list the servers' tools stay open for the run's calls, and the run closes them at its end.
    """
    registry = base or builtin_registry()
    try:
        manifests = load_manifests(root)
    except ManifestError as exc:
        raise ConfigError(str(exc)) from None
    for tool, activity in manifests:
        if tool.name in registry:
            raise ConfigError(f"manifest tool {tool.name!r} clashes with a built-in tool")
        registry.add(tool, activity)
    add_latent_tools(registry, config, profile_tools)
    connections = await add_mcp_tools(registry, config, root, trusted=trusted, person=person)
    names = registry.names()
    if profile_tools is not None:
        names = [n for n in names if n in profile_tools]
    if config.policy.allow_tools is not None:
        names = [n for n in names if n in config.policy.allow_tools]
    if not config.tool_calling.enabled:
        names = []
    return registry.subset(names), connections


def gate_for(
    config: Config,
    registry: ToolRegistry,
    workspace: Workspace,
    reviewer: Reviewer,
    bus: EventBus,
    *,
    trusted: bool,
    run_id: str = "",
) -> tuple[Gate, ActivityContext, Redactor]:
    """A gate over `registry` in `workspace`, with the activity context and redactor it uses."""
    ctx = ActivityContext(
        workspace=workspace,
        settings=activity_settings(config, trusted=trusted),
        run_id=run_id,
        before_tests=reviewer.before_tests,
    )
    redactor = Redactor(config.api_key)
    gate = Gate(
        registry=registry,
        policy=policy_for(config),
        reviewer=reviewer,
        ctx=ctx,
        bus=bus,
        redactor=redactor,
        max_argument_depth=config.tool_calling.max_argument_depth,
    )
    return gate, ctx, redactor


def activity_settings(config: Config, *, trusted: bool) -> ActivitySettings:
    """The limits and lists activities obey, from the configuration."""
    return ActivitySettings(
        allowed_commands=parse_allowed(config.policy.allowed_commands),
        command_timeout_seconds=config.limits.command_timeout_seconds,
        max_output_bytes=max(config.tool_calling.retention.max_output_bytes, 64_000),
        trusted=trusted,
        sandbox=config.sandbox,
    )


async def create_run(
    setup: RunSetup, task: str, endpoint: Endpoint, run_id: str | None = None
) -> AgentRun:
    """Build an AgentRun, its MCP servers started.

    Raises SetupError or ConfigError with a one-line reason, and then no server is left running.
    """
    config = setup.config
    # Trust is checked here, before anything talks to the endpoint, so no front end can skip it.
    for notice in check_trust(setup.root, config):
        setup.bus.emit(NOTICE, run_id or "", message=notice)
    expanded = expand_command(setup.root, task)
    if expanded is not None:
        # A prompt file's slash command, in any front end: the model reads the prompt it makes.
        task, command = expanded
        where = (
            command.path.relative_to(setup.root) if command.source == "workspace" else command.path
        )
        setup.bus.emit(NOTICE, run_id or "", message=f"/{command.name}: the prompt of {where}")
    try:
        profile = load_profile(setup.root, config.profile)
    except KeyError as exc:
        raise ConfigError(str(exc.args[0])) from None
    starting = servers_to_start(config, trusted=setup.trusted)
    if starting:
        # A server can take seconds to start; say what the run is waiting for.
        names = ", ".join(f"{s.name} ({s.describe()})" for s in starting)
        setup.bus.emit(NOTICE, run_id or "", message=f"starting MCP servers: {names}")
    registry, connections = await build_registry(
        config, setup.root, setup.registry, profile.tools, setup.trusted, person=setup.reviewer
    )
    try:
        return await _assemble(setup, task, endpoint, run_id, profile, registry, connections)
    except BaseException:
        await close_all(connections)  # the run will not happen: its servers stop now
        raise


async def _assemble(
    setup: RunSetup,
    task: str,
    endpoint: Endpoint,
    run_id: str | None,
    profile: Profile,
    registry: ToolRegistry,
    connections: list[McpConnection],
) -> AgentRun:
    config = setup.config
    redactor = Redactor(config.api_key)
    if endpoint.small_model and profile.source == "built-in" and profile.name == "developer":
        profile = replace(profile, instructions=SMALL_MODEL_ROLE)
    settings, model = await _chat_model(config, endpoint, redactor)
    budget = await context_budget(config, endpoint, settings)
    compact = wants_compact(
        config.tool_calling.compact_prompt, budget.window, small_model=endpoint.small_model
    )
    if compact and not endpoint.small_model:
        profile = replace(profile, instructions=profile.role(compact=True))
    instructions = load_instructions(setup.root)
    customization_notes: list[str] = [*config.notes, *instructions.problems]
    fit_rules(instructions, budget.window, customization_notes.append)
    if config.tool_calling.enabled:
        offer_skills(registry, instructions)
    prompt = system_prompt(profile, instructions, tools_enabled=config.tool_calling.enabled)
    calling = config.tool_calling
    if endpoint.preferred_mode and calling.mode == "auto":
        calling = replace(calling, mode=endpoint.preferred_mode)
    calling = replace(calling, compact_prompt=compact)
    grammar = _tool_grammar(config, endpoint)
    if grammar is not None and calling.mode == "text":
        settings.extra_body = {"grammar": grammar(registry.openai_tools())}
    run = AgentRun(
        task=task,
        model=model,
        registry=registry,
        policy=policy_for(config, setup.mode),
        reviewer=setup.reviewer,
        ctx=_activity_context(setup),
        system_prompt=prompt,
        tool_calling=calling,
        limits=config.limits,
        bus=setup.bus,
        run_id=run_id,
        redactor=redactor,
        profile=profile.name,
        cleanups=[c.aclose for c in connections],
        conversation=setup.conversation,
        budget=budget,
    )

    def notice(message: str) -> None:
        setup.bus.emit(NOTICE, run.run_id, message=message)

    run.gate.latent = latent_answers(config, settings, notice, redactor.text)
    for line in customization_notes:
        notice(line)
    run.rules = [rule.label(setup.root) for rule in instructions.rules]
    await _customize(setup, task, run, instructions, notice)
    await _attach_pointed(setup, task, run, budget)
    return run


def _tool_grammar(
    config: Config, endpoint: Endpoint
) -> Callable[[list[dict[str, Any]]], str] | None:
    """What builds the tool grammar for text-mode requests, if they are to carry one."""
    wanted = config.tool_calling.grammar
    if wanted is False or config.tool_calling.text_syntax != "tag":
        return None  # the grammar spells the tag syntax's blocks only
    if wanted is None or endpoint.grammar is not None:
        return endpoint.grammar
    from toolgate.model.local_assets import LocalModelError
    from toolgate.model.local_grammar import tool_grammar

    try:
        tool_grammar([])  # the converter comes from llama-cpp-python: say now if it is missing
    except LocalModelError as exc:
        raise SetupError(
            f"tool_calling.grammar is on, but {exc}; install toolgate[local], or set it to false"
        ) from None
    return tool_grammar


async def _chat_model(
    config: Config, endpoint: Endpoint, redactor: Redactor
) -> tuple[ModelSettings, OpenAIChatModel]:
    """The model the run talks to and its settings, the model's name asked of the endpoint."""
    settings = model_settings(config, endpoint, tool_choice=config.model.tool_choice)
    if endpoint.small_model:
        # A small model follows instructions best without sampling, and without a cap it can
        # repeat itself until its context is full.
        if config.model.temperature is None:
            settings.temperature = 0.0
        if config.model.max_tokens is None:
            settings.max_tokens = 768
    model = OpenAIChatModel(settings, redact=redactor.text)
    if not endpoint.model:
        model.model = settings.model = await pick_model(model)
    return settings, model


def _activity_context(setup: RunSetup) -> ActivityContext:
    """What the run's activities work in, each test run announced on the bus."""
    config = setup.config
    workspace = Workspace(setup.root, max_file_bytes=config.limits.max_file_bytes)
    if setup.buffers is not None:
        workspace.buffers = setup.buffers
    ctx = ActivityContext(
        workspace=workspace,
        settings=activity_settings(config, trusted=setup.trusted),
        before_tests=setup.reviewer.before_tests,
    )

    def on_test_run(test_run: Any) -> None:
        setup.bus.emit(
            TESTS_FINISHED,
            ctx.run_id,
            summary=test_run.to_data()["summary"],
            failures=len(test_run.failures),
            failing=[failure.test_id for failure in test_run.failures[:20]],
            not_run=not_run_reason(test_run),  # None when the tests ran, passing or not
        )
        if setup.on_test_run is not None:
            setup.on_test_run(test_run)

    ctx.on_test_run = on_test_run
    return ctx


async def _customize(
    setup: RunSetup,
    task: str,
    run: AgentRun,
    instructions: Instructions,
    notice: Callable[[str], None],
) -> None:
    """Give the run the project's hooks, skills and rules; a hook may block the prompt."""

    def rules_used(labels: list[str]) -> None:
        setup.bus.emit(RULES_USED, run.run_id, rules=labels)

    conversation = setup.conversation
    session_file = conversation.file.path if conversation and conversation.file else None
    custom = RunCustomization(
        setup.root,
        setup.config.hooks,
        session_id=(conversation.session_id if conversation else None) or run.run_id,
        transcript_path=str(session_file or ""),
        notice=notice,
        skills=instructions.agent_skills,
        sent_rules=always_digests(instructions),
        on_rules=rules_used,
    )
    run.gate.hooks = custom
    if custom.runner:
        new_session = conversation is None or conversation.turns == 0
        run.turn_context, blocked = await prompt_context(custom, task, new_session=new_session)
        if blocked is not None:
            raise SetupError(f"a hook of this project blocked the prompt: {blocked}", blocked=True)
        run.stop_check = custom.stop
        run.before_compact = custom.pre_compact


async def _attach_pointed(setup: RunSetup, task: str, run: AgentRun, budget: Budget) -> None:
    """The context the person points at, put before their words and shown in the turn.

    All of it together may take what one tool result may (a third of a request), and never
    more than the request has left beside the system prompt, the tools and the person's
    words, so the turn always fits.
    """
    room = budget.output_bytes()
    free = run.room_for_turn()
    if free is not None:
        # The blocks' own tags and the cut notes take a little of it too.
        room = min(room, int((free - len(task.encode("utf-8"))) * 0.9) - 512)
    attached = await attach(run.ctx.workspace, task, setup.pointed, max(room, 0))
    if not attached.note:
        return
    run.turn_context = "\n\n".join(part for part in (run.turn_context, attached.note) if part)
    run.runlog.set(attached=attached.items, not_attached=attached.refused)
    run.turn_attached = {"items": attached.items, "refused": attached.refused}
    setup.bus.emit(
        NOTICE,
        run.run_id,
        message=attached.summary(),
        attached=attached.items,
        not_attached=attached.refused,
    )


async def context_budget(config: Config, endpoint: Endpoint, settings: ModelSettings) -> Budget:
    """The window a run's requests must fit: the config's, else the endpoint's, else 16k."""
    window = config.model.context_tokens
    if window is None and not endpoint.probed:
        endpoint.context_tokens = await endpoint_context_tokens(
            endpoint.base_url, settings.model, config.api_key
        )
        endpoint.probed = True
    known = bool(window or endpoint.context_tokens)
    window = window or endpoint.context_tokens or DEFAULT_CONTEXT_TOKENS
    # The answer's room is what the request lets the model write, when that is set.
    reserve = min(settings.max_tokens, window // 2) if settings.max_tokens else None
    return Budget(window=window, reserve=reserve, known=known)


@dataclass
class GatedCalls:
    """The tools behind one gate, for a front end that makes the calls itself (MCP)."""

    registry: ToolRegistry
    gate: Gate
    runlog: RunLog
    ctx: ActivityContext


def gated_calls(
    root: Path,
    config: Config,
    reviewer: Reviewer,
    bus: EventBus,
    run_id: str,
    task: str,
    *,
    trusted: bool = True,
) -> GatedCalls:
    """The built-in tools (narrowed by the policy's allow list) behind the engine's own gate."""
    registry = builtin_registry()
    names = registry.names()
    if config.policy.allow_tools is not None:
        names = [n for n in names if n in config.policy.allow_tools]
    registry = registry.subset(names)
    workspace = Workspace(root, max_file_bytes=config.limits.max_file_bytes)
    gate, ctx, redactor = gate_for(
        config, registry, workspace, reviewer, bus, trusted=trusted, run_id=run_id
    )
    runlog = RunLog(workspace.root, run_id, task, "", "", "mcp", redactor, profile="mcp")
    bus.subscribe(runlog.on_event)
    return GatedCalls(registry, gate, runlog, ctx)
