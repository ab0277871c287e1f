"""The gate: every tool call passes here — decided by the policy, reviewed by the person, run."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolgate.agent.call_hooks import NO_SAY, CallHooks
from toolgate.agent.checkpoints import Checkpoint, record_command_changes, snapshot_workspace
from toolgate.agent.events import (
    PROPOSAL_CREATED,
    PROPOSAL_RESOLVED,
    TOOL_CALL_DECIDED,
    TOOL_CALL_EXECUTED,
    TOOL_CALL_PROPOSED,
    TOOL_PROGRESS,
    EventBus,
)
from toolgate.agent.latent import LatentAnswers
from toolgate.agent.policy import Decision, Policy
from toolgate.agent.redact import Redactor
from toolgate.model.meter import UNMETERED, RequestMeter
from toolgate.model.structured import nesting_depth
from toolgate.records import ToolCall, ToolResult
from toolgate.review.problems import problems_note
from toolgate.review.proposal import ProposalStatus, Resolution, make_proposal
from toolgate.review.reviewer import ApprovalRequest, Reviewer
from toolgate.runner.allowlist import CommandRefused, is_allowed
from toolgate.tools.activity import (
    Activity,
    ActivityContext,
    ChangeActivity,
    CommandActivity,
    FileChange,
)
from toolgate.tools.registry import ToolRegistry, strip_meta
from toolgate.tools.schema import OTHER, Tool
from toolgate.workspace import PathRefused

log = logging.getLogger(__name__)

_ELIDE_OVER = 2_000  # bytes of an argument shown in events; file contents live in the diff


@dataclass
class GateOutcome:
    """A call's result and how it was decided."""

    result: ToolResult
    decision: str  # auto | approved | rejected | denied
    arguments: dict[str, Any]
    reasoning: str = ""
    proposal_id: str | None = None
    rule: str | None = None  # the setting that refused the call, when no person did


def shown_arguments(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as events show them: long strings (file contents) elided."""
    shown: dict[str, Any] = {}
    for key, value in args.items():
        if key == "content" and isinstance(value, str):
            # File contents live in the proposal's diff, not in the transcript.
            shown[key] = f"[{len(value)} characters]"
        elif isinstance(value, str) and len(value) > _ELIDE_OVER:
            shown[key] = value[:200] + f"… [{len(value)} characters]"
        else:
            shown[key] = value
    return shown


class Gate:
    """Decides, asks, runs, and reports each call of a run."""

    def __init__(
        self,
        *,
        registry: ToolRegistry,
        policy: Policy,
        reviewer: Reviewer,
        ctx: ActivityContext,
        bus: EventBus,
        redactor: Redactor,
        max_argument_depth: int = 32,
        meter: RequestMeter = UNMETERED,
    ) -> None:
        self.registry = registry
        self.policy = policy
        self.reviewer = reviewer
        self.ctx = ctx
        self.bus = bus
        self.redact = redactor
        self.max_argument_depth = max_argument_depth
        # Where the model requests of latent answers are counted: the run's own count.
        self.meter = meter
        self._checkpoint: Checkpoint | None = None
        # How latent tools are answered (the run's endpoint); None: the model answers them itself.
        self.latent: LatentAnswers | None = None
        # A front end's look at each result as it comes (the events carry no tool output).
        self.on_result: Callable[[ToolCall, ToolResult], None] | None = None
        # What the workspace's hooks, rules and skills say around each call.
        self.hooks: CallHooks | None = None
        if ctx.on_progress is None:
            # A tool's stderr reaches every front end as events, like the rest of the run.
            ctx.on_progress = self._progress

    def _progress(self, tool: str, line: str) -> None:
        self.bus.emit(TOOL_PROGRESS, self.run_id, tool_name=tool, line=self.redact.text(line))

    @property
    def checkpoint(self) -> Checkpoint:
        """The run's checkpoint store, made when the run first changes something."""
        if self._checkpoint is None or self._checkpoint.run_id != self.run_id:
            self._checkpoint = Checkpoint(self.ctx.workspace.root, self.run_id)
        return self._checkpoint

    def _keep_before(self, path: str) -> None:
        """Put a file's bytes into the checkpoint before the run first changes it."""
        try:
            real = self.ctx.workspace.resolve(path, for_write=True)
            raw = real.read_bytes() if real.is_file() else None
        except (PathRefused, OSError):
            return  # the reviewer refuses this path too: nothing will change
        self.checkpoint.before_change(path, raw)

    @property
    def run_id(self) -> str:
        """The run this gate serves."""
        return self.ctx.run_id

    def invalid(self, call: ToolCall, error: str) -> GateOutcome:
        """A call that never reaches the gate: unknown tool or bad arguments."""
        return GateOutcome(
            ToolResult.fail(error, suggestions=self._suggest(call)), "denied", call.arguments
        )

    def _suggest(self, call: ToolCall) -> list[str]:
        tool = self.registry.get(call.name)
        if tool is None:
            return [f"Available tools: {', '.join(self.registry.names())}."]
        schema = json.dumps(tool.parameters, ensure_ascii=False)
        return [f"Arguments of {call.name} must match: {schema}"]

    async def handle(self, call: ToolCall) -> GateOutcome:
        """Take one call through policy, review and execution."""
        start = time.perf_counter()
        args, reasoning = strip_meta(call.arguments)
        reasoning = reasoning or call.reasoning
        self.bus.emit(
            TOOL_CALL_PROPOSED,
            self.run_id,
            tool_name=call.name,
            tool_kind=self._kind(call),
            call_id=call.id,
            raw_args=self.redact.deep(shown_arguments(args)),
            reasoning=reasoning,
            syntax=call.syntax,
        )
        outcome = await self._decide_and_run(call, args, reasoning)
        result = outcome.result
        tool = self.registry.get(call.name)
        if self.hooks is not None and tool is not None:
            try:
                result.notes.extend(await self.hooks.after(call, tool, args, result))
            except Exception:  # a hook's failure is reported by the hooks; the run goes on
                log.exception("after-call hooks failed for %s", call.name)
        if result.success and isinstance(result.data, dict) and self._commits(call):
            self.checkpoint.commit_made(str(result.data.get("commit") or ""))
        if not result.duration_seconds:
            result.duration_seconds = round(time.perf_counter() - start, 6)
        if self.on_result is not None:
            try:
                self.on_result(call, result)
            except Exception:  # a front end's bug must not end the run
                log.exception("on_result failed for %s", call.name)
        self.bus.emit(
            TOOL_CALL_EXECUTED,
            self.run_id,
            tool_name=call.name,
            tool_kind=self._kind(call),
            call_id=call.id,
            success=result.success,
            decision=outcome.decision,
            rule=outcome.rule,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
            output_truncated=result.output_truncated,
            output_size_bytes=result.output_size_bytes,
            error=self.redact.text(result.error) if result.error else None,
        )
        return outcome

    def _kind(self, call: ToolCall) -> str:
        """What the call's tool does (`Tool.kind`), as every front end is told with its events."""
        tool = self.registry.get(call.name)
        return tool.kind if tool is not None else OTHER

    def _commits(self, call: ToolCall) -> bool:
        """Whether the call's tool makes git commits (undo names them, it cannot remove them)."""
        tool = self.registry.get(call.name)
        return tool is not None and "git.commit" in tool.capabilities

    async def _decide_and_run(
        self, call: ToolCall, args: dict[str, Any], reasoning: str
    ) -> GateOutcome:
        """Refuse the call, ask about it, or run it, in that order of precedence."""
        tool = self.registry.get(call.name)
        assert tool is not None  # unknown tools are turned away before the gate
        activity = self.registry.activity(call.name)
        unfit = self._unfit(call, activity, args, reasoning)
        if unfit is not None:
            return unfit
        if activity is None:
            return await self._latent(call, tool, args, reasoning)
        if tool.executes and not self.ctx.settings.trusted:
            untrusted = self._denied(
                call,
                f"{call.name} is refused: this workspace is not trusted, so nothing may run "
                "here (tests, git, commands). Reading and proposing changes still work.",
                args,
                reasoning,
            )
            untrusted.rule = "untrusted workspace"
            return untrusted
        argv: list[str] | None = None
        command_allowed: bool | None = None
        if isinstance(activity, CommandActivity):
            try:
                argv = activity.argv(self.ctx, args)
            except CommandRefused as exc:
                return self._denied(call, str(exc), args, reasoning)
            command_allowed = is_allowed(argv, self.ctx.settings.allowed_commands)
        decision = self.policy.decide(tool, command_allowed=command_allowed)
        if decision == Decision.DENY:
            return self._denied_by_policy(call, tool, args, reasoning, argv, command_allowed)
        decision, refused = await self._ask_hooks(call, tool, args, reasoning, decision)
        if refused is not None:
            return refused
        self._decided(call, decision, reasoning)
        if isinstance(activity, ChangeActivity):
            return await self._plan_change(call, activity, decision, args, reasoning)
        if decision == Decision.ASK:
            return await self._ask_then_run(
                call, tool, activity, args, reasoning, argv, command_allowed
            )
        return GateOutcome(await self._run(call, activity, args), "auto", args, reasoning)

    def _unfit(
        self, call: ToolCall, activity: Activity | None, args: dict[str, Any], reasoning: str
    ) -> GateOutcome | None:
        """The refusal of a call nothing can answer or whose arguments nest too deep; else None."""
        answered = self.latent is not None and self.registry.answerer(call.name) is not None
        if activity is None and not answered:
            return self._denied(
                call,
                f"{call.name} is a latent tool: there is no code behind it; answer it yourself "
                "in your reply",
                args,
                reasoning,
            )
        if nesting_depth(args) > self.max_argument_depth:
            too_deep = self._denied(
                call,
                f"{call.name} is refused: its arguments nest deeper than "
                f"tool_calling.max_argument_depth ({self.max_argument_depth} levels)",
                args,
                reasoning,
                suggestions=["Send flatter arguments: fewer objects and arrays inside each other."],
            )
            too_deep.rule = "tool_calling.max_argument_depth"
            return too_deep
        return None

    def _denied_by_policy(
        self,
        call: ToolCall,
        tool: Tool,
        args: dict[str, Any],
        reasoning: str,
        argv: list[str] | None,
        command_allowed: bool | None,
    ) -> GateOutcome:
        """The refusal of a call the policy denies, naming the setting that does."""
        rule = self.policy.rule(tool, command_allowed=command_allowed)
        why = (
            f"{call.name} is denied by policy ({rule})"
            if command_allowed is not False
            else f"the command {argv} is not on the allow-list and the policy denies it ({rule})"
        )
        denied = self._denied(
            call,
            why,
            args,
            reasoning,
            suggestions=[
                "Do the task with the tools you are allowed to use, or say "
                "in your answer what the person needs to do."
            ],
        )
        denied.rule = rule
        return denied

    async def _plan_change(
        self,
        call: ToolCall,
        activity: ChangeActivity,
        decision: Decision,
        args: dict[str, Any],
        reasoning: str,
    ) -> GateOutcome:
        """Plan a change and propose it; a plan refused before anybody saw it is the result."""
        try:
            planned = await activity.plan(self.ctx, args)
        except Exception as exc:  # a tool's bug is a result the model reads
            return GateOutcome(_crashed(call.name, exc), "denied", args, reasoning)
        if isinstance(planned, ToolResult):
            # Refused before anybody saw it (sandbox, no match): nothing was proposed.
            label = "auto" if planned.success else "denied"
            return GateOutcome(planned, label, args, reasoning)
        return await self._change(call, planned, decision, args, reasoning)

    async def _ask_then_run(
        self,
        call: ToolCall,
        tool: Tool,
        activity: Activity,
        args: dict[str, Any],
        reasoning: str,
        argv: list[str] | None,
        command_allowed: bool | None,
    ) -> GateOutcome:
        """Ask the person about the call, and run it when they approve."""
        summary = " ".join(argv) if argv is not None else _summary(call.name, activity, args)
        approval = await self.reviewer.confirm(
            ApprovalRequest(
                run_id=self.run_id,
                call_id=call.id,
                tool=call.name,
                summary=summary,
                why=reasoning,
                off_allow_list=command_allowed is False,
                kind=tool.kind,
            )
        )
        if not approval.approved:
            return GateOutcome(
                _rejected(approval.reason, approval.rule),
                "rejected",
                args,
                reasoning,
                rule=approval.rule,
            )
        return GateOutcome(await self._run(call, activity, args), "approved", args, reasoning)

    async def _ask_hooks(
        self,
        call: ToolCall,
        tool: Tool,
        args: dict[str, Any],
        reasoning: str,
        decision: Decision,
    ) -> tuple[Decision, GateOutcome | None]:
        """The hooks' word on a call the policy lets through: refuse it, ask, or let it run."""
        if self.hooks is None:
            return decision, None
        try:
            verdict = await self.hooks.before(call, tool, args)
        except Exception:  # a hook's failure is reported by the hooks; the call goes on
            log.exception("before-call hooks failed for %s", call.name)
            verdict = NO_SAY
        if verdict.decision == "deny":
            refused = self._denied(
                call, f"{call.name} was blocked: {verdict.reason}", args, reasoning
            )
            refused.rule = "hook"
            return decision, refused
        if verdict.decision == "ask":
            return Decision.ASK, None
        if verdict.decision == "allow" and decision == Decision.ASK:
            return Decision.AUTO, None
        return decision, None

    async def _latent(
        self, call: ToolCall, tool: Tool, args: dict[str, Any], reasoning: str
    ) -> GateOutcome:
        """A latent tool answered by the model: a read, so only a policy's deny stops it."""
        assert self.latent is not None
        if self.policy.decide(tool) == Decision.DENY:
            rule = self.policy.rule(tool)
            denied = self._denied(
                call, f"{call.name} is denied by policy ({rule})", args, reasoning
            )
            denied.rule = rule
            return denied
        self._decided(call, Decision.AUTO, reasoning)
        root = self.ctx.workspace.root
        result = await self.latent.answer(
            self.registry, root, self.run_id, call.name, args, self.meter
        )
        return GateOutcome(result, "auto", args, reasoning)

    async def _run(self, call: ToolCall, activity: Activity, args: dict[str, Any]) -> ToolResult:
        tool = self.registry.get(call.name)
        if tool is None or not tool.executes:
            return await self._run_program(call, activity, args)
        # A program reads the disk (tests, commands, git): accepted changes still in editor
        # buffers reach it first, before the command's snapshot below.
        notes = await self.ctx.before_tests()
        result = await self._run_program(call, activity, args)
        if notes and result.data is None:
            result.data = {"notes": notes}
        elif notes and isinstance(result.data, dict):
            result.data["notes"] = [*notes, *result.data.get("notes", [])]
        return result

    async def _run_program(
        self, call: ToolCall, activity: Activity, args: dict[str, Any]
    ) -> ToolResult:
        if not isinstance(activity, CommandActivity):
            return await self._run_activity(call, activity, args)
        # A command may change files (a formatter, a test writing fixtures): what it changes
        # joins the run's checkpoint, so that undo puts it back too.
        workspace = self.ctx.workspace
        snapshot = await asyncio.to_thread(snapshot_workspace, workspace)
        if snapshot is None:
            return await self._run_activity(call, activity, args)
        try:
            result = await self._run_activity(call, activity, args)
        except BaseException:  # cancelled mid-command: what it changed so far is still kept
            record_command_changes(self.checkpoint, workspace, snapshot)
            raise
        await asyncio.to_thread(record_command_changes, self.checkpoint, workspace, snapshot)
        return result

    async def _run_activity(
        self, call: ToolCall, activity: Activity, args: dict[str, Any]
    ) -> ToolResult:
        try:
            return await activity.run(self.ctx, args)
        except Exception as exc:  # a tool's bug is a result the model reads, never a crash
            return _crashed(call.name, exc)

    def _denied(
        self,
        call: ToolCall,
        error: str,
        args: dict[str, Any],
        reasoning: str,
        *,
        suggestions: list[str] | None = None,
    ) -> GateOutcome:
        """Turn the call away before it runs: the model reads `error` as its result."""
        result = ToolResult.fail(error, suggestions=suggestions)
        self._decided(call, Decision.DENY, reasoning, error=result.error)
        return GateOutcome(result, "denied", args, reasoning)

    def _decided(self, call: ToolCall, decision: Decision, reasoning: str, **detail: Any) -> None:
        """Tell the bus how the gate decided `call`, before anything runs."""
        self.bus.emit(
            TOOL_CALL_DECIDED,
            self.run_id,
            tool_name=call.name,
            tool_kind=self._kind(call),
            call_id=call.id,
            decision=decision.value,
            why=reasoning,
            **detail,
        )

    async def _change(
        self,
        call: ToolCall,
        change: FileChange,
        decision: Decision,
        args: dict[str, Any],
        reasoning: str,
    ) -> GateOutcome:
        proposal = make_proposal(
            run_id=self.run_id,
            call_id=call.id,
            tool=call.name,
            path=change.path,
            original=change.original,
            proposed=change.proposed,
            why=reasoning,
        )
        self.bus.emit(
            PROPOSAL_CREATED,
            self.run_id,
            proposal_id=proposal.id,
            tool=call.name,
            path=proposal.path,
            diff=proposal.diff,
            hunks=len(proposal.hunks),
            why=reasoning,
            auto=decision == Decision.AUTO,
        )
        self._keep_before(proposal.path)
        if decision == Decision.AUTO:
            resolution = await self.reviewer.apply_change(proposal)
        else:
            resolution = await self.reviewer.review_change(proposal)
        proposal.status = resolution.status
        proposal.hunks_applied = list(resolution.hunks_applied)
        proposal.reason = resolution.reason
        # The problems other language servers report after it; most changes' events have none.
        caused = (
            {"problems": [p.to_json() for p in resolution.problems]} if resolution.problems else {}
        )
        self.bus.emit(
            PROPOSAL_RESOLVED,
            self.run_id,
            proposal_id=proposal.id,
            status=resolution.status.value,
            hunks_applied=resolution.hunks_applied,
            reason=resolution.reason,
            **caused,
        )
        if resolution.landed:
            self.checkpoint.after_change(
                proposal.path, proposal.text_with(set(resolution.hunks_applied))
            )
        result = _change_result(proposal.path, len(proposal.hunks), resolution)
        if resolution.landed:
            label = "auto" if decision == Decision.AUTO else "approved"
        else:
            label = "rejected"
        return GateOutcome(result, label, args, reasoning, proposal.id, resolution.rule)


def _summary(name: str, activity: Activity, args: dict[str, Any]) -> str:
    """What the person is asked about: the activity's own words for it, else the call."""
    describe = getattr(activity, "describe", None)
    if callable(describe):
        return str(describe(args))
    return f"{name} {json.dumps(args, ensure_ascii=False)[:300]}"


def _crashed(name: str, exc: Exception) -> ToolResult:
    return ToolResult.fail(f"{name} failed inside Toolgate: {type(exc).__name__}: {exc}")


def _rejected(reason: str | None, rule: str | None = None) -> ToolResult:
    # A rule that answered for nobody is named as such: no person saw this call.
    message = f"refused by {rule}, nobody was asked" if rule else "the person rejected this call"
    if reason:
        message += f": {reason}"
    return ToolResult.fail(message, suggestions=[_RULE_HINT if rule else _REASON_HINT])


_RULE_HINT = "Nobody can approve this here; say in your answer what the person needs to do."
_REASON_HINT = "Take the person's reason into account; do not repeat the same call unchanged."
_CHANGE_REASON_HINT = (
    "Take the person's reason into account; do not propose the same change unchanged."
)


def _change_result(path: str, total: int, resolution: Resolution) -> ToolResult:
    status = resolution.status
    data: dict[str, Any] = {
        "path": path,
        "status": status.value,
        "hunks_applied": resolution.hunks_applied,
        "hunks_total": total,
    }
    notes = [n for n in (resolution.message, problems_note(resolution.problems)) if n]
    if notes:
        data["note"] = ". ".join(notes)
    if status == ProposalStatus.ACCEPTED:
        data["message"] = f"the change to {path} was accepted and applied"
        return ToolResult.ok(data)
    if status == ProposalStatus.PARTIALLY_ACCEPTED:
        rejected = [i for i in range(total) if i not in resolution.hunks_applied]
        data["hunks_rejected"] = rejected
        data["message"] = (
            f"only hunks {resolution.hunks_applied} of {total} were applied to {path}; "
            f"hunks {rejected} were rejected"
            + (f": {resolution.reason}" if resolution.reason else "")
            + ". Read the file again before changing it further."
        )
        return ToolResult.ok(data)
    if status == ProposalStatus.STALE:
        return ToolResult.fail(
            f"the proposal for {path} is stale: the person edited the file and the change no "
            "longer applies. " + (resolution.reason or ""),
            suggestions=[f"read_file {path} again and propose the change against its new text."],
            data=data,
        )
    if status == ProposalStatus.CANCELLED:
        return ToolResult.fail(f"the proposal for {path} was cancelled", data=data)
    if resolution.error:
        return ToolResult.fail(
            f"could not apply the change to {path}: {resolution.error}", data=data
        )
    message = (
        f"the change to {path} was refused by {resolution.rule}, nobody was asked"
        if resolution.rule
        else f"the person rejected the change to {path}"
    )
    if resolution.reason:
        message += f": {resolution.reason}"
    return ToolResult.fail(
        message,
        data=data,
        suggestions=[_RULE_HINT if resolution.rule else _CHANGE_REASON_HINT],
    )
