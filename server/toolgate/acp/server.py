"""The ACP agent: requests answered through the session service, run events as updates."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlparse

from acp import PROTOCOL_VERSION, Agent, RequestError, helpers
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    ClientCapabilities,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerHttp,
    McpServerSse,
    McpServerStdio,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TextContentBlock,
    TextResourceContents,
    UsageUpdate,
)

from toolgate import __version__
from toolgate.acp import commands, convert, framing, options, plan
from toolgate.acp.reviewer import AcpReviewer
from toolgate.acp.thoughts import ThinkSplitter
from toolgate.acp.updates import CallIds, RunEvents, Updates
from toolgate.agent.events import ASSISTANT_REASONING, EventBus
from toolgate.config import ConfigError, load_config
from toolgate.session import Claim, SessionError, SessionService, SetupError, TurnHooks
from toolgate.session.deltas import TextDeltas
from toolgate.session.mentions import Pointed, Resource
from toolgate.workspace import Workspace

log = logging.getLogger(__name__)

API_KEY_METHOD = "openai-api-key"
MAX_PROMPT_CHARS = 1_000_000  # a task is a message to a model; beyond this it is a mistake


def _quoted(value: str) -> str:
    return repr(value[:80] + ("…" if len(value) > 80 else ""))


@dataclass
class AcpSession:
    """One session this connection opened or loaded."""

    id: str
    root: Path
    service: SessionService
    always: set[str] = field(default_factory=set)  # tools allowed for the rest of the session
    values: dict[str, str] = field(default_factory=dict)  # the config options' choices
    mcp: dict[str, dict[str, Any]] = field(default_factory=dict)  # the client's MCP servers
    ids: CallIds = field(default_factory=CallIds)  # the tool call ids the editor has seen
    turn: Claim | None = None  # the turn running now, which a cancel stops
    reviewing: asyncio.Task[str] | None = None  # a `/review` waiting for the model
    busy: bool = False


def client_mcp_servers(servers: list[Any] | None) -> dict[str, dict[str, Any]]:
    """The client's MCP servers as `[mcp.servers]` tables: stdio, Streamable HTTP and SSE."""
    tables: dict[str, dict[str, Any]] = {}
    for server in servers or []:
        name = re.sub(r"[^A-Za-z0-9-]+", "-", server.name).strip("-") or "mcp"
        if isinstance(server, McpServerStdio):
            tables[name] = {
                "command": [server.command, *server.args],
                "env": {variable.name: variable.value for variable in server.env},
            }
        elif isinstance(server, (McpServerHttp, McpServerSse)):
            tables[name] = {
                "url": server.url,
                "type": "http" if isinstance(server, McpServerHttp) else "sse",
                "headers": {header.name: header.value for header in server.headers},
            }
        else:
            log.warning("MCP server %r skipped: its transport is not supported", server.name)
    return tables


# ACP's prompt carries no editor selection or problems list: the client attaches files instead.
NO_SELECTION = (
    "ACP sends no editor selection or problems list; attach the file (or paste its lines) "
    "to the prompt instead"
)


def prompt_parts(blocks: list[Any]) -> tuple[str, list[Resource]]:
    """The prompt's words, and the resources it attaches (embedded text, and links to read).

    The resources become the turn's context blocks (`session.mentions`): counted in the
    window, cut to fit, a link outside the workspace refused. A binary resource is named in
    the words, as a link is that no text can be read from.
    """
    parts: list[str] = []
    resources: list[Resource] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                resources.append(Resource(resource.uri, resource.text))
            else:
                parts.append(f"[a binary resource, not attached]({resource.uri})")
        elif isinstance(block, ResourceContentBlock):
            resources.append(Resource(block.uri, None, block.name))
    return "\n\n".join(parts), resources


class ToolgateAgent:
    """The ACP `Agent`: thin handlers over one SessionService per workspace root."""

    def __init__(self, overrides: dict[str, Any] | None = None) -> None:
        self.overrides = overrides or {}
        self.conn: AgentSideConnection | None = None
        self.updates: Updates | None = None
        self.client = ClientCapabilities()
        self.initialized = False
        self.services: dict[Path, SessionService] = {}
        self.sessions: dict[str, AcpSession] = {}
        self.prompts: set[asyncio.Task[Any]] = set()

    def on_connect(self, conn: AgentSideConnection) -> None:
        """Keep the connection: updates, permission requests and files go through it."""
        self.conn = conn
        self.updates = Updates(conn)

    # -- lifecycle --------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Negotiate the version; say what Toolgate offers; remember what the client offers."""
        self.client = client_capabilities or ClientCapabilities()
        self.initialized = True
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), resume=SessionResumeCapabilities()
                ),
            ),
            auth_methods=[
                EnvVarAuthMethod(
                    type="env_var",
                    id=API_KEY_METHOD,
                    name="OpenAI-compatible API key",
                    description="The key of the endpoint Toolgate's configuration names",
                    vars=[AuthEnvVar(name="OPENAI_API_KEY", label="API key", secret=True)],
                )
            ],
            agent_info=Implementation(name="toolgate", title="Toolgate", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """The API key comes in the environment the editor starts Toolgate with."""
        if method_id != API_KEY_METHOD:
            raise RequestError.invalid_params({"methodId": f"unknown method {_quoted(method_id)}"})
        if not os.environ.get("OPENAI_API_KEY") and not self._config_has_key():
            raise RequestError.auth_required(
                {"message": "set OPENAI_API_KEY in the agent's environment or the user config"}
            )
        return AuthenticateResponse()

    def _config_has_key(self) -> bool:
        try:
            return bool(load_config(Path.cwd(), overrides=self.overrides).api_key)
        except ConfigError:
            return False

    async def shutdown(self) -> None:
        """The client is gone: end every turn (the session files stay valid), stop services."""
        for session in self.sessions.values():
            if session.turn is not None:
                session.turn.cancel("the editor disconnected")
        if self.prompts:
            await asyncio.wait(self.prompts, timeout=30)
        if self.updates is not None:
            await self.updates.close()
        for service in self.services.values():
            await service.close()

    # -- sessions ---------------------------------------------------------------------------

    def _service(self, cwd: str) -> SessionService:
        root = Path(cwd)
        if not root.is_absolute() or not root.is_dir():
            raise RequestError.invalid_params({"cwd": f"not an absolute folder: {_quoted(cwd)}"})
        root = root.resolve()
        if root not in self.services:
            overrides = self.overrides
            self.services[root] = SessionService(
                root,
                lambda: load_config(root, overrides=overrides),
                notice=lambda message: log.info("%s", message),
            )
        return self.services[root]

    def _session(self, session_id: str) -> AcpSession:
        if not self.initialized:
            raise RequestError.invalid_request({"message": "initialize first"})
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": f"unknown session {_quoted(session_id)}: session/new or load it"}
            )
        return session

    def _opened(self, session_id: str, service: SessionService) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            try:
                values = options.defaults(service.config())
            except ConfigError as exc:
                raise RequestError.invalid_request({"message": str(exc)}) from None
            session = AcpSession(session_id, service.root, service, values=values)
            self.sessions[session_id] = session
        self._offer_commands(session)
        return session

    def _send_usage(self, session_id: str, context: dict[str, int] | None) -> None:
        """A `usage_update` with the context used and the window's size, when they are known."""
        if context is None:
            return  # a session no turn has ended in yet, or one kept before it was recorded
        assert self.updates is not None
        update = UsageUpdate(
            session_update="usage_update", used=context["used"], size=context["size"]
        )
        self.updates.put(session_id, update)

    def _offer_commands(self, session: AcpSession) -> None:
        assert self.updates is not None
        offered = commands.available(session.service)
        self.updates.put(session.id, helpers.update_available_commands(offered))

    async def new_session(
        self,
        cwd: str,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A new conversation in the workspace at `cwd`."""
        if not self.initialized:
            raise RequestError.invalid_request({"message": "initialize first"})
        service = self._service(cwd)
        session_id = service.new_session()
        session = self._opened(session_id, service)
        session.mcp = client_mcp_servers(mcp_servers)
        assert self.updates is not None
        await self.updates.flush()  # the commands are known before the session is used
        return NewSessionResponse(
            session_id=session_id,
            config_options=options.describe(session.values),  # type: ignore[arg-type]  # dicts the SDK validates
            modes=options.modes(session.values),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        """Replay a stored conversation as updates, then answer."""
        if not self.initialized:
            raise RequestError.invalid_request({"message": "initialize first"})
        service = self._service(cwd)
        try:
            loaded = service.load(session_id)
        except SessionError as exc:
            raise RequestError.invalid_params({"sessionId": str(exc)}) from None
        assert self.updates is not None
        ids = CallIds()
        known = plan.registry()  # the tools a stored call is drawn as (others: "other")
        for entry in loaded["transcript"]:
            kind = entry.get("kind")
            if kind == "user":
                self.updates.put(session_id, helpers.update_user_message_text(entry["text"]))
            elif kind == "assistant":
                split = ThinkSplitter()  # a kept `<think>` block is shown as thought again
                for part, text in split.feed(entry["text"]) + split.finish():
                    if part == "thought":
                        self.updates.put(session_id, helpers.update_agent_thought_text(text))
                    else:
                        self.updates.put(session_id, helpers.update_agent_message_text(text))
            elif kind == "tool" and entry.get("name") == plan.NAME:
                update = plan.plan_update(entry.get("arguments") or {})
                if update is not None:
                    self.updates.put(session_id, update)
            elif kind == "tool" and entry.get("callId"):
                call_id, name = ids.begin(str(entry["callId"])), str(entry.get("name") or "")
                args = entry.get("arguments") or {}
                tool = known.get(name)
                self.updates.put(
                    session_id, convert.started(service.root, call_id, name, args, tool)
                )
                status = convert.replayed_status(entry.get("status"))
                summary = entry.get("summary") or ""
                content = [convert.text_content(summary)] if summary else None
                self.updates.put(session_id, convert.progress(call_id, status, content))
        self._send_usage(session_id, loaded.get("context"))
        session = self._opened(session_id, service)
        session.ids = ids  # the replayed calls' ids are taken
        session.mcp = client_mcp_servers(mcp_servers)
        await self.updates.flush()
        return LoadSessionResponse(
            config_options=options.describe(session.values),  # type: ignore[arg-type]  # dicts
            modes=options.modes(session.values),
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """Go on with a stored session without replaying it (the editor still shows it)."""
        if not self.initialized:
            raise RequestError.invalid_request({"message": "initialize first"})
        service = self._service(cwd)
        try:
            conversation = service.open(session_id)
        except SessionError as exc:
            raise RequestError.invalid_params({"sessionId": str(exc)}) from None
        self._send_usage(session_id, conversation.context)
        session = self._opened(session_id, service)
        session.mcp = client_mcp_servers(mcp_servers)
        assert self.updates is not None
        await self.updates.flush()
        return ResumeSessionResponse(
            config_options=options.describe(session.values),  # type: ignore[arg-type]  # dicts
            modes=options.modes(session.values),
        )

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        """Choose the profile or the approval policy for the session's next turns."""
        session = self._session(session_id)
        problem = options.check(config_id, value)
        if problem is not None:
            raise RequestError.invalid_params({"value": problem})
        session.values[config_id] = str(value)
        if config_id == options.APPROVAL:
            assert self.updates is not None
            mode = CurrentModeUpdate(
                session_update="current_mode_update", current_mode_id=str(value)
            )
            self.updates.put(session_id, mode)
        return SetSessionConfigOptionResponse(config_options=options.describe(session.values))  # type: ignore[arg-type]  # dicts

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        """Choose the approval policy through the session's modes (config options follow)."""
        session = self._session(session_id)
        problem = options.check(options.APPROVAL, mode_id)
        if problem is not None:
            raise RequestError.invalid_params({"modeId": problem})
        session.values[options.APPROVAL] = mode_id
        assert self.updates is not None
        described = options.describe(session.values)
        self.updates.put(
            session_id,
            ConfigOptionUpdate(session_update="config_option_update", config_options=described),  # type: ignore[arg-type]  # dicts
        )
        return SetSessionModeResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The stored sessions of `cwd` (or of every workspace this connection opened)."""
        services = [self._service(cwd)] if cwd else list(self.services.values())
        listed = [
            SessionInfo(
                session_id=info.id,
                cwd=str(service.root),
                title=info.title or None,
                updated_at=info.last_activity or None,
            )
            for service in services
            for info in service.sessions()
        ]
        return ListSessionsResponse(sessions=listed)

    # -- turns ------------------------------------------------------------------------------

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        """Run one turn through the engine; answer its stop reason."""
        session = self._session(session_id)
        if session.busy:
            raise RequestError.invalid_request(
                {"message": "a turn is already running in this session"}
            )
        task, resources = prompt_parts(prompt)
        command = commands.command_of(task)
        task = commands.TASKS.get(task.strip(), task)
        if not task.strip() and resources:
            task = "Look at the attached context."
        if not task.strip():
            raise RequestError.invalid_params({"prompt": "the prompt has no text"})
        if len(task) > MAX_PROMPT_CHARS:
            raise RequestError.invalid_params(
                {"prompt": f"the prompt is over {MAX_PROMPT_CHARS} characters"}
            )
        current = asyncio.current_task()
        if current is not None:
            self.prompts.add(current)
        session.busy = True
        try:
            if command is not None:
                return await self._command(session, command, task.split()[1:])
            return await self._turn(session, task, resources)
        finally:
            session.busy = False
            if current is not None:
                self.prompts.discard(current)

    async def _command(self, session: AcpSession, command: str, words: list[str]) -> PromptResponse:
        """`/review`, `/new`, `/undo` or `/rewind` (its `words` after it): done outside a run."""
        assert self.conn is not None and self.updates is not None
        service = session.service
        if command == "/review":
            try:
                config = service.config()
                options.apply(config, session.values)  # the model the person picked
            except ConfigError as exc:
                raise RequestError.invalid_request({"message": str(exc)}) from None
            # Only the review can be stopped half-way: it changes nothing. /undo writes files
            # and runs to its end.
            review = asyncio.ensure_future(commands.review(service, config))
            session.reviewing = review
            try:
                await asyncio.wait({review})
            finally:
                session.reviewing = None
                review.cancel()  # when this prompt itself is cancelled
            if review.cancelled():
                return PromptResponse(stop_reason="cancelled")
            said = review.result()
        elif command == "/new":
            try:
                claim = service.claim(session.id)
            except SessionError as exc:
                raise RequestError.invalid_request({"message": str(exc)}) from None
            try:
                through = claim.conversation.set_aside()
            finally:
                service.release(claim)
            said = (
                f"Starting afresh: the model no longer sees turns 1–{through} of this session."
                if through
                else "Starting afresh: this session has no earlier turns."
            )
        else:
            if any(
                s.busy and s is not session and s.root == session.root
                for s in self.sessions.values()
            ):
                raise RequestError.invalid_request(
                    {"message": "a turn is changing files in this workspace; wait or cancel it"}
                )
            fs = self.client.fs
            if command == "/rewind":
                said = await commands.rewind(
                    self.conn,
                    session.id,
                    service,
                    words,
                    read_through_client=bool(fs and fs.read_text_file),
                    write_through_client=bool(fs and fs.write_text_file),
                )
            else:
                said = await self._undo(session, service)
        self.updates.put(session.id, helpers.update_agent_message_text(said))
        self._offer_commands(session)
        await self.updates.flush()
        return PromptResponse(stop_reason="end_turn")

    async def _undo(self, session: AcpSession, service: SessionService) -> str:
        """`/undo`, asked about with the diffs and written through the editor where it can."""
        assert self.conn is not None and self.updates is not None
        fs = self.client.fs
        try:
            return await commands.undo(
                self.conn,
                session.id,
                service,
                read_through_client=bool(fs and fs.read_text_file),
                write_through_client=bool(fs and fs.write_text_file),
                updates=self.updates,
            )
        except SessionError as exc:  # a turn of another session is changing files
            raise RequestError.invalid_request({"message": str(exc)}) from None

    async def _turn(
        self, session: AcpSession, task: str, resources: list[Resource]
    ) -> PromptResponse:
        assert self.conn is not None and self.updates is not None
        service = session.service
        try:
            config = service.config()
            mode = options.apply(config, session.values)
            # The editor's own servers: the person configured them there, as trusted as flags.
            config.mcp.servers.update(session.mcp)
            claim = service.claim(session.id)
        except (ConfigError, SessionError) as exc:
            raise RequestError.invalid_request({"message": str(exc)}) from None
        bus = EventBus()
        updates = self.updates
        events = RunEvents(updates, session.id, session.root, session.ids)
        bus.subscribe(TextDeltas(events.text))
        bus.subscribe(TextDeltas(events.reasoning, kind=ASSISTANT_REASONING))
        bus.subscribe(events)
        fs = self.client.fs
        reviewer = AcpReviewer(
            Workspace(service.root, max_file_bytes=config.limits.max_file_bytes),
            self.conn,
            session.id,
            always=session.always,
            write_through_client=bool(fs and fs.write_text_file),
            flush=self.updates.flush,
            show=lambda update: updates.put(session.id, update),
            ids=session.ids.of,
            elicitation=self.client.elicitation,
        )
        reads = bool(fs and fs.read_text_file)
        hooks = TurnHooks(
            on_result=events.result,
            before_read=reviewer.before_read if reads else None,
            on_run=lambda run: setattr(events, "tools", run.registry.get),
        )
        if reads:
            for resource in resources:
                if resource.text is None and resource.uri.startswith("file:"):
                    # A linked file is read as the editor holds it, unsaved text included.
                    path = unquote(urlparse(resource.uri).path)
                    with contextlib.suppress(ValueError):
                        rel = (
                            Path(os.path.realpath(path))
                            .relative_to(reviewer.workspace.root)
                            .as_posix()
                        )
                        await reviewer.before_read(rel)
        session.turn = claim  # a cancel from here on stops the turn, its set-up included
        try:
            outcome = await service.turn(
                claim,
                task,
                config=config,
                reviewer=reviewer,
                bus=bus,
                hooks=hooks,
                buffers=reviewer.workspace.buffers if reads else None,
                registry=plan.registry(),
                mode=mode,
                pointed=Pointed(resources=resources, unavailable=NO_SELECTION),
            )
        except (SetupError, ConfigError) as exc:
            raise RequestError.internal_error({"message": str(exc)}) from None
        finally:
            session.turn = None
        # The context the turn left, as its end was kept in the session (load sends it again).
        self._send_usage(session.id, claim.conversation.context)
        self._offer_commands(session)  # a turn that changed files can be undone
        await self.updates.flush()
        return PromptResponse(
            stop_reason=convert.stop_reason(
                outcome.status, outcome.finish_reason, refused=outcome.refusal is not None
            )
        )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's turn; its prompt answers `cancelled`."""
        session = self.sessions.get(session_id)
        if session is None:
            return  # a notification has no answer; an unknown id has nothing to stop
        if session.turn is not None:
            session.turn.cancel("cancelled by the person")
        if session.reviewing is not None:
            session.reviewing.cancel()


def serve(overrides: dict[str, Any] | None = None) -> int:
    """Serve ACP on stdin/stdout until the client closes stdin."""
    asyncio.run(_serve(overrides))
    return 0


async def _serve(overrides: dict[str, Any] | None) -> None:
    raw, writer, checked = await framing.stdio()
    agent = ToolgateAgent(overrides)
    # The SDK routes only the methods an agent defines; the rest are answered "method not found".
    # session/resume is still marked unstable in the SDK; the method is routed only when asked.
    conn = AgentSideConnection(
        cast(Agent, agent), writer, checked, listening=False, use_unstable_protocol=True
    )
    reading = asyncio.create_task(framing.pump(raw, checked, writer))
    try:
        await conn.listen()
    finally:
        await agent.shutdown()
        reading.cancel()
        await conn.close()
