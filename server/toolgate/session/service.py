"""The session service: what lives longer than one run, for one workspace.

Every front end goes through it: it loads the configuration, asks the person about settings a
workspace widens (through the front end's one trust prompt), keeps the endpoint alive between
runs (the embedded model takes seconds to start), holds the workspace's conversations, and
starts, runs and ends each turn of one — claiming the session first, so that two runs never
interleave their turns in one file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from toolgate.agent.events import EventBus
from toolgate.agent.loop import RunOutcome
from toolgate.agent.redact import Redactor
from toolgate.code_review.changes import Changes, working_tree_changes
from toolgate.code_review.records import CodeReview, ReviewSetupError
from toolgate.config import Config, ConfigError, TrustItem
from toolgate.conversation.history import Conversation, transcript
from toolgate.conversation.marks import undo_record
from toolgate.conversation.store import (
    SessionBusy,
    SessionError,
    SessionInfo,
    SessionLock,
    SessionStore,
    file_stamp,
)
from toolgate.planning.gaps import ResolvedPlan
from toolgate.planning.plan import Plan
from toolgate.planning.service import PlanResult, load_kept, resolve
from toolgate.records import ToolCall, ToolResult, new_id
from toolgate.review.reviewer import Reviewer
from toolgate.session.assembly import (
    Endpoint,
    RunSetup,
    SetupError,
    create_run,
    gated_calls,
    resolve_endpoint,
)
from toolgate.session.code_review import review_in_workspace, review_request
from toolgate.session.listing import clean_title, scan
from toolgate.session.mentions import Pointed
from toolgate.session.modes import DEFAULT_MODE, mode_problem
from toolgate.session.plans import Engine, assemble_engine, make_plan
from toolgate.session.rewind import Restore, RewindDone, rewind, take_back
from toolgate.session.turns import Claim, Turn, TurnHooks, ended_in_set_up, redacted
from toolgate.session.undo import (
    ApplyUndo,
    AskUndo,
    ReadFirst,
    UndoDone,
    on_disk,
    undo_run,
    undoable,
)
from toolgate.session.undo_state import add_undo_state, session_of_run
from toolgate.tools.registry import ToolRegistry
from toolgate.trust import TrustStore
from toolgate.workspace.sandbox import Buffers

# Asks the person whether a setting a workspace widens may take effect; True: remember it.
TrustPrompt = Callable[[TrustItem], Awaitable[bool]]


class SessionService:
    """Configuration, trust, the endpoint, the conversations and their runs, for one workspace."""

    def __init__(
        self,
        root: Path,
        load_config: Callable[[], Config],
        *,
        trust_prompt: TrustPrompt | None = None,
        notice: Callable[[str], None] = lambda message: None,
        trust_store: TrustStore | None = None,
    ) -> None:
        self.root = root
        self._load_config = load_config
        self._trust_prompt = trust_prompt
        self._notice = notice
        self._trust = trust_store or TrustStore()
        self.store = SessionStore(root)
        self.current: str | None = None  # the session an ask without an id continues
        self._claims: dict[str, Claim] = {}
        self._endpoint: Endpoint | None = None  # the embedded model, kept between runs
        self._windows: dict[tuple[str, str | None], int | None] = {}
        # The conversation each session's file held when this service last wrote or read it:
        # a turn then costs the same at turn 200 as at turn 10 (no re-reading of the file).
        self._cache: dict[str, Conversation] = {}
        self.mode = DEFAULT_MODE  # the approval mode a turn runs in unless it names one

    def set_mode(self, mode: str) -> None:
        """Choose the approval mode of the turns to come (ValueError: not a mode)."""
        problem = mode_problem(mode)
        if problem is not None:
            raise ValueError(problem)
        self.mode = mode

    # -- configuration, trust and endpoint --------------------------------------------------

    def config(self) -> Config:
        """The merged configuration now (raises ConfigError with the file and key)."""
        return self._load_config()

    async def confirm_trust(self, config: Config, *, every: bool = False) -> tuple[int, int]:
        """Ask the person about each setting the workspace widens and they have not confirmed.

        Returns (confirmed now, asked). A base URL is asked about only when the API key would
        go to it, unless `every`. Without a prompt nothing is asked: `create_run` then holds
        such settings back (or refuses a base URL that would receive the API key), with a
        notice saying how to confirm.
        """
        if self._trust_prompt is None:
            return (0, 0)
        confirmed = self._trust.confirmed(self.root)
        chosen: list[str] = []
        asked = 0
        for item in config.pending_trust:
            if item.fingerprint in confirmed:
                continue
            if item.kind == "base_url" and not config.api_key and not every:
                continue  # no key would be sent: nothing to confirm
            asked += 1
            if await self._trust_prompt(item):
                chosen.append(item.fingerprint)
                self._trust.confirm(self.root, [item.fingerprint])
        return (len(chosen), asked)

    async def endpoint(self, config: Config) -> Endpoint:
        """The configured endpoint, or the embedded model started once and kept."""
        if config.model.base_url:
            endpoint = await resolve_endpoint(config, self._notice)
            key = (endpoint.base_url, endpoint.model)
            if key in self._windows:
                endpoint.context_tokens, endpoint.probed = self._windows[key], True
            return endpoint
        if self._endpoint is None:
            self._endpoint = await resolve_endpoint(config, self._notice)
        return self._endpoint

    async def forget_ended_endpoint(self) -> str | None:
        """If the kept embedded model server has ended, drop it and say how, in one line.

        The next run then starts a new one; a front end shows the line to the person once.
        """
        if self._endpoint is None:
            return None
        from toolgate.model.local import exit_report_for

        report = await exit_report_for(self._endpoint.base_url, wait=0)
        if report is not None:
            await self.close()
        return report

    def _remember_window(self, endpoint: Endpoint) -> None:
        if endpoint.probed and endpoint is not self._endpoint:
            self._windows[(endpoint.base_url, endpoint.model)] = endpoint.context_tokens

    async def close(self) -> None:
        """Stop what the service keeps running (the embedded model)."""
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is not None and endpoint.close is not None:
            await endpoint.close()

    async def run_tests(
        self,
        command: str | None,
        *,
        reviewer: Reviewer,
        bus: EventBus,
        trusted: bool = True,
        buffers: Any = None,
        on_test_run: Callable[[Any], None] | None = None,
    ) -> ToolResult:
        """The person's own test run: the `run_tests` tool through the same gate as a model's.

        Raises ValueError with a one-line reason for a command that is not a test command on
        the allow-list, or a workspace that is not trusted (the person gets an error, where a
        model would get a refused call).
        """
        from toolgate.runner.allowlist import (
            CommandRefused,
            is_allowed,
            parse_allowed,
            split_command,
        )

        config = self.config()
        if not trusted:
            raise ValueError("this workspace is not trusted: tests may not run here")
        try:
            argv = split_command(command or "pytest -q --tb=short")
        except CommandRefused as exc:
            raise ValueError(str(exc)) from None
        allowed = config.policy.allowed_commands
        if not is_allowed(argv, parse_allowed(allowed)):
            raise ValueError(f"{' '.join(argv)} is not on the allow-list ({', '.join(allowed)})")
        run_id = new_id("tests")
        calls = gated_calls(
            self.root,
            config,
            reviewer,
            bus,
            run_id,
            f"run_tests {' '.join(argv)}",
            trusted=trusted,
        )
        if buffers is not None:
            calls.ctx.workspace.buffers = buffers
        calls.ctx.on_test_run = on_test_run
        arguments = {"command": command} if command else {}
        outcome = await calls.gate.handle(
            ToolCall(id=run_id, name="run_tests", arguments=arguments)
        )
        # Kept in a run log, as a model's test run is: `@tests` attaches the latest one.
        calls.runlog.record_call(
            calls.runlog.begin_step(1),
            {
                "id": run_id,
                "name": "run_tests",
                "arguments": outcome.arguments,
                "decision": outcome.decision,
                "result": outcome.result.to_dict(),
            },
        )
        calls.runlog.finish("completed", None, {})
        return outcome.result

    async def review(
        self,
        config: Config,
        notice: Callable[[str], None],
        *,
        staged: bool = False,
        focus: list[str] | None = None,
        changes: Changes | None = None,
    ) -> tuple[Changes, CodeReview | None]:
        """The model's review of the working tree's changes (or the staged ones, or `changes`).

        Asked of the endpoint this service keeps. The review is None when there is nothing to
        review. Raises ReviewSetupError in one line (no endpoint, not a git repository, a
        setting not confirmed) and ReviewError when the model gives no valid review.
        """
        if changes is None:
            changes = await working_tree_changes(self.root, staged=staged)
        if not changes.diff.strip():
            return changes, None
        try:
            endpoint = await self.endpoint(config)
        except SetupError as exc:
            raise ReviewSetupError(str(exc)) from None
        request = review_request(config, changes, focus)
        review = await review_in_workspace(self.root, config, request, notice, endpoint=endpoint)
        return changes, review

    async def make_plan(
        self,
        task: str,
        notice: Callable[[str], None],
        *,
        config: Config,
        pointed: Pointed | None = None,
    ) -> PlanResult:
        """A plan for `task`, resolved and kept under a new plan id (`.toolgate/plans/`).

        A saved workflow whose trigger matches the task is taken as it is; otherwise the model
        is asked, with the context the task's `@` mentions and `pointed` attach. Raises
        PlanningError (and ManifestError for a broken manifest).
        """
        return await make_plan(self.root, config, task, new_id("plan"), notice, pointed)

    def resolve_plan(
        self, plan: Plan | str, *, config: Config, write_cache: bool = True
    ) -> ResolvedPlan:
        """A plan (or the kept plan of that id) resolved against the workspace's tools.

        Raises PlanningError for a kept plan that cannot be read, ManifestError for a broken
        manifest.
        """
        if isinstance(plan, str):
            plan = load_kept(self.root, plan)
        return resolve(self.root, config, plan, write_cache=write_cache)

    async def plan_engine(
        self,
        config: Config,
        reviewer: Reviewer,
        bus: EventBus,
        *,
        trusted: bool = True,
        buffers: Any = None,
    ) -> Engine:
        """What runs a plan step by step: the tools, policy and gate a run has, no model.

        The caller closes it (`await engine.close()`): it holds the MCP servers' sessions.
        """
        return await assemble_engine(
            self.root, config, reviewer, bus, trusted=trusted, buffers=buffers
        )

    # -- sessions ---------------------------------------------------------------------------

    def new_session(self, title: str = "") -> str:
        """Create an empty session; it becomes the current one."""
        session_id, _ = self.store.create(clean_title(title))
        self.current = session_id
        return session_id

    def open(self, session_id: str) -> Conversation:
        """A session's conversation, read from its file (SessionError names what is wrong)."""
        file = self.store.open(session_id)
        cached = self._cache.get(session_id)
        if cached is not None and cached.file is not None:
            if cached.file.stamp is not None and cached.file.stamp == file_stamp(file.path):
                return cached
        conversation = Conversation.from_loaded(file.load(self.root), file)
        for message in conversation.notices:
            self._notice(message)
        if cached is not None and not self.store.is_known(session_id):
            # Said where a turn is about to start, so the person is not surprised by what the
            # model now knows (a terminal's turns, another editor's). A record this process
            # marked on the session itself, or a change its editor was told of, is not news.
            added = conversation.turns - cached.turns
            self._notice(
                f"session {session_id} changed elsewhere since it was last used here"
                + (f": {added} turn(s) were added, which the model sees" if added > 0 else "")
            )
        return conversation

    def _keep(self, session_id: str, conversation: Conversation) -> None:
        if conversation.file is not None:
            self._cache[session_id] = conversation

    def load(self, session_id: str) -> dict[str, Any]:
        """A session and its transcript, as a client draws it; it becomes the current one."""
        file = self.store.open(session_id)
        loaded = file.load(self.root)
        conversation = Conversation.from_loaded(loaded, None)
        self.current = session_id
        entries = transcript(loaded)
        add_undo_state(self.root, entries)
        return {
            "id": session_id,
            "title": conversation.title,
            "created": conversation.created,
            "lastActivity": conversation.last_activity,
            "transcript": entries,
            "context": conversation.context,
        }

    def mark(
        self, session_id: str | None, record: dict[str, Any], *, create: bool = False
    ) -> str | None:
        """Append a record of `conversation.marks` to a session: the given one, else the current.

        With `create`, a workspace without a current session gets a new one. Returns the session
        written to (None: there was none). A run continuing the session holds its claim: the
        record is one complete line appended after the run's last one, so neither is torn, and
        the claimed conversation's cache sees the file changed and reads it again.
        """
        if session_id is None:
            session_id = self.current
        if session_id is None:
            if not create:
                return None
            session_id = self.new_session()
        try:
            key = self.config().api_key
        except ConfigError:
            key = None  # the key-shaped pattern still applies
        # A plan carries the person's words and the model's: kept as the turns are, redacted.
        self.store.open(session_id).append(Redactor(key).deep(record))
        return session_id

    async def undo(
        self,
        run_id: str | None = None,
        *,
        force: bool = False,
        dry_run: bool = False,
        ask: AskUndo | None = None,
        apply: ApplyUndo = on_disk,
        buffers: Buffers | None = None,
        read_first: ReadFirst | None = None,
        session_id: str | None = None,
    ) -> UndoDone:
        """Put back what run `run_id` (default: the workspace's latest) changed, or say what would.

        The front end supplies how to ask (`ask`, shown the plan; None: do not ask), how to
        apply (default: to disk), the editor's buffers and how to fetch a file's text into
        them first. The undo is kept in `session_id`, else in the session of the run it undid.
        Raises CheckpointError when there is nothing to undo, and SessionBusy while a turn of
        this service is changing files.
        """
        if self._claims and not dry_run:
            raise SessionBusy("a turn is changing files in this workspace; wait or cancel it")
        return await undo_run(
            self.root,
            run_id,
            force=force,
            dry_run=dry_run,
            ask=ask,
            apply=apply,
            buffers=buffers,
            read_first=read_first,
            keep=lambda undo, undone, files: self.keep_undo(undo, undone, files, session_id),
        )

    async def rewind(
        self,
        session_id: str | None,
        to_turn: int,
        what: str = "both",
        *,
        apply: ApplyUndo = on_disk,
        buffers: Buffers | None = None,
        read_first: ReadFirst | None = None,
    ) -> RewindDone:
        """Take a session (default: the current one) back to the end of turn `to_turn`.

        `what` is `code` (each later run's files put back as `undo` does, the person's own
        later edits left alone and named), `conversation` (later turns out of what the model
        sees, kept in the file as rewound) or `both`. Turn 0 is before the first turn.
        Raises RewindError (a SessionError) when there is nothing to rewind, SessionBusy while
        a turn runs; `apply`, `buffers` and `read_first` are as `undo` takes them.
        """
        return await self._rewinding(
            session_id,
            lambda sid, loaded, restore, keep, write: rewind(
                self.root, sid, loaded, to_turn, what, restore, keep_undo=keep, write=write
            ),
            Restore(apply, buffers, read_first),
        )

    async def undo_rewind(
        self,
        session_id: str | None,
        rewind_id: str | None = None,
        *,
        apply: ApplyUndo = on_disk,
        buffers: Buffers | None = None,
        read_first: ReadFirst | None = None,
    ) -> RewindDone:
        """Take back a rewind of a session (default: its latest still in effect).

        Its undos are redone (the person's later edits left alone) and its turns are seen by
        the model again; refused (RewindError) when the conversation went on since.
        """
        return await self._rewinding(
            session_id,
            lambda sid, loaded, restore, keep, write: take_back(
                self.root, sid, loaded, rewind_id, restore, keep_undo=keep, write=write
            ),
            Restore(apply, buffers, read_first),
        )

    async def _rewinding(self, session_id: str | None, work: Any, restore: Restore) -> RewindDone:
        """Run `work` on a session held as a turn holds it, nobody's turn running anywhere."""
        session_id = session_id or self.current
        if session_id is None:
            raise SessionError("no session to rewind: start or load one first")
        file = self.store.open(session_id)
        if self._claims:
            raise SessionBusy("a turn is running in this workspace; wait or cancel it")
        lock = SessionLock(self.store.lock_path(session_id), session_id)
        lock.acquire()  # refuses while another process continues the session
        try:
            loaded = file.load(self.root)

            def keep(undo: str, undone: str, files: list[str]) -> str | None:
                return self.keep_undo(undo, undone, files, session_id)

            def write(record: dict[str, Any]) -> None:
                self.store.open(session_id).append(record)

            done: RewindDone = await work(session_id, loaded, restore, keep, write)
        finally:
            lock.release()
            # The next turn reads the file again: the model sees what the rewind left.
            self._cache.pop(session_id, None)
        return done

    def undoable(self) -> bool:
        """Whether the workspace's latest run has changes an undo can put back."""
        return undoable(self.root)

    def keep_undo(
        self, undo_run_id: str, undone: str, files: list[str], session_id: str | None = None
    ) -> str | None:
        """Keep an undo in a session: the given one, else the one of the run it undid.

        Returns the session (None: there was none). A session that cannot be written is left
        as it is: the undo itself is done and recorded in its checkpoint.
        """
        session_id = session_id or session_of_run(self.root, undone)
        if session_id is None:
            return None
        try:
            return self.mark(session_id, undo_record(undo_run_id, undone, files))
        except (SessionError, OSError) as exc:
            self._notice(f"the undo is not kept in session {session_id}: {exc}")
            return None

    def sessions(self) -> list[SessionInfo]:
        """Every readable session, most recent activity first (unreadable ones are skipped)."""
        found = []
        for session_id in self.store.ids():
            info = scan(self.store.path(session_id), session_id)
            if info is not None:
                found.append(info)
        found.sort(key=lambda info: info.last_activity, reverse=True)
        return found

    def latest(self) -> str | None:
        """The session with the most recent activity, if any."""
        listed = self.sessions()
        return listed[0].id if listed else None

    def rename(self, session_id: str, title: str) -> None:
        """Give a session a new title."""
        title = clean_title(title)
        if not title:
            raise SessionError("a session's title cannot be empty")
        self.open(session_id).set_title(title)

    def changed_elsewhere(self, paths: Iterable[Path]) -> list[tuple[str, bool]]:
        """The sessions among `paths` another process changed, and whether each is gone.

        Each outside change is named once; this service's own writes never are.
        """
        return self.store.changed_elsewhere(paths)

    def delete(self, session_id: str) -> None:
        """Delete a session, unless a run is continuing it."""
        self.store.open(session_id)  # an unknown id is refused before anything is touched
        if session_id in self._claims:
            raise SessionBusy(f"session {session_id} is busy: a run is continuing it")
        lock = SessionLock(self.store.lock_path(session_id), session_id)
        lock.acquire()  # refuses while another process continues it
        try:
            self.store.delete(session_id)
            self._cache.pop(session_id, None)
        finally:
            lock.release()
        if self.current == session_id:
            self.current = None

    # -- turns ------------------------------------------------------------------------------

    def claim(self, session_id: str | None = None, *, new: bool = False) -> Claim:
        """Hold a session for one turn: the given one, else the current one, else a new one.

        Raises SessionError for an unknown or unreadable session and SessionBusy when another
        run (here or in another process) is continuing it.
        """
        if new or (session_id is None and self.current is None):
            session_id = self.new_session()
        elif session_id is None:
            session_id = self.current
        assert session_id is not None
        if session_id in self._claims:
            raise SessionBusy(
                f"session {session_id} is busy: another run is continuing it; wait for it to "
                "end or start a new session"
            )
        self.store.open(session_id)  # an unknown id is refused before anything is held
        lock = SessionLock(self.store.lock_path(session_id), session_id)
        lock.acquire()
        try:
            conversation = self.open(session_id)
        except BaseException:
            lock.release()
            raise
        claim = Claim(session_id, conversation, lock)
        conversation.on_turn_end = lambda: self.release(claim)
        self._claims[session_id] = claim
        self.current = session_id
        return claim

    def release(self, claim: Claim) -> None:
        """Let others continue the session."""
        if self._claims.get(claim.session_id) is claim:
            del self._claims[claim.session_id]
            self._keep(claim.session_id, claim.conversation)
        claim.lock.release()

    async def start(
        self,
        claim: Claim,
        task: str,
        *,
        config: Config,
        reviewer: Reviewer,
        bus: EventBus,
        run_id: str | None = None,
        buffers: Any = None,
        trusted: bool = True,
        on_test_run: Callable[[Any], None] | None = None,
        endpoint: Endpoint | None = None,
        registry: ToolRegistry | None = None,
        mode: str | None = None,
        pointed: Pointed | None = None,
    ) -> Turn:
        """Assemble the run of one turn (SetupError / ConfigError say why it cannot start).

        `mode` is the turn's approval mode (`session.modes`); None: the service's own.
        """
        mode = mode or self.mode
        problem = mode_problem(mode)
        if problem is not None:
            raise ConfigError(problem)
        await self.confirm_trust(config)
        endpoint = endpoint or await self.endpoint(config)
        setup = RunSetup(
            root=self.root,
            config=config,
            reviewer=reviewer,
            bus=bus,
            buffers=buffers,
            trusted=trusted,
            on_test_run=on_test_run,
            conversation=claim.conversation,
            registry=registry,  # a front end's own tools beside the built-ins
            mode=mode,
            pointed=pointed,
        )
        run = await create_run(setup, task, endpoint, run_id=run_id or claim.run_id)
        self._remember_window(endpoint)
        return Turn(claim, run)

    async def turn(
        self,
        claim: Claim,
        task: str,
        *,
        config: Config,
        reviewer: Reviewer,
        bus: EventBus,
        hooks: TurnHooks | None = None,
        buffers: Any = None,
        trusted: bool = True,
        endpoint: Endpoint | None = None,
        registry: ToolRegistry | None = None,
        mode: str | None = None,
        pointed: Pointed | None = None,
    ) -> RunOutcome:
        """One turn of the claimed session: its run started, run to its end; the claim released.

        Raises SetupError or ConfigError, their message redacted, when the run cannot start.
        A turn stopped through `claim.cancel` ends `cancelled`: before its run exists, the
        set-up is abandoned (a model or MCP server it was starting stops) and `RUN_FINISHED`
        on `bus` says so, as a run's end does. However the turn ends, the claim is released.
        `pointed` is what the front end knows of the editor for the message's `@` mentions.
        """
        hooks = hooks or TurnHooks()
        try:
            turn = await self._set_up(
                claim,
                task,
                config=config,
                reviewer=reviewer,
                bus=bus,
                buffers=buffers,
                trusted=trusted,
                on_test_run=hooks.on_test_run,
                endpoint=endpoint,
                registry=registry,
                mode=mode,
                pointed=pointed,
            )
            if turn is None or turn.run is None:
                return ended_in_set_up(claim, bus)
            run = turn.run
            if hooks.on_result is not None:
                run.gate.on_result = redacted(hooks.on_result, run.redact)
            if hooks.before_read is not None:
                run.gate.ctx.before_read = hooks.before_read
            if hooks.on_run is not None:
                hooks.on_run(run)
            claim.run = run
            if claim.cancelled is not None:
                # Stopped as its set-up ended: a run is cancelled through its task, which
                # exists once `finish` has started it, one step of the loop from here.
                asyncio.get_running_loop().call_soon(run.cancel, claim.cancelled)
            try:
                return await self.finish(turn)
            finally:
                claim.run = None
        finally:
            self.release(claim)

    async def _set_up(self, claim: Claim, task: str, **setup: Any) -> Turn | None:
        """The turn's run, assembled; None when the turn was cancelled before it was."""
        if claim.cancelled is not None:
            return None
        starting = asyncio.ensure_future(self.start(claim, task, **setup))
        claim._setup = starting
        try:
            await asyncio.wait({starting})
        except asyncio.CancelledError:
            # The front end's own task was cancelled (Ctrl-C, a shutdown): the set-up stops
            # too, and what it started is stopped before the cancellation goes on.
            starting.cancel()
            await asyncio.wait({starting})
            claim.cancelled = claim.cancelled or "cancelled"
            ended_in_set_up(claim, setup["bus"])
            raise
        finally:
            claim._setup = None
        if starting.cancelled():
            return None
        try:
            return starting.result()
        except (SetupError, ConfigError) as exc:
            config: Config = setup["config"]
            exc.args = (Redactor(config.api_key).text(str(exc)),)
            raise

    async def finish(self, turn: Turn) -> RunOutcome:
        """Run the turn to its end, then close its model and release the session."""
        try:
            assert turn.run is not None
            outcome = await turn.run.run()
            await turn.run.model.close()
            return outcome
        finally:
            self.release(turn.claim)
