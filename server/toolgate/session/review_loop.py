"""The review loop: implement → review → implement again with the comments → test → account.

Each implementation is a turn of one session (the model sees its earlier turns and the
review's comments), so every change it makes passes the gate and the person's review as in
any run. The review reads what those runs changed, from their checkpoints, and is answered by
the model against the review schema. The loop stops at the first approval or after
`[review] max_rounds` reviews, then runs the tests through the same gate as the model's
`run_tests`, and ends with one account of every round, kept as the loop's own log
(`.toolgate/runs/<loop_id>.json`; each implementation run keeps its own log and checkpoint).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolgate.agent.events import NOTICE, EventBus
from toolgate.agent.redact import Redactor
from toolgate.agent.runlog import RunLog
from toolgate.code_review.changes import runs_changes
from toolgate.code_review.records import CodeReview, ReviewError
from toolgate.config import Config
from toolgate.records import new_id
from toolgate.review.reviewer import Reviewer
from toolgate.session.code_review import review_in_workspace, review_request
from toolgate.session.service import SessionService
from toolgate.session.turns import Claim, TurnHooks

DEFAULT_MAX_ROUNDS = 3
DEFAULT_TEST_COMMAND = "pytest -q --tb=short"
# Emitted once per review and once at the loop's end (the terminal prints the notices; a
# `--json` reader and the editor get these records).
CODE_REVIEWED = "CodeReviewed"
REVIEW_LOOP_FINISHED = "ReviewLoopFinished"

FIX_PROMPT = """The review of your change did not approve it. Address every comment below by
changing the code (each change is reviewed by the person as before), then say what you changed.

{comments}"""


@dataclass
class Round:
    """One implementation turn and the review of what the runs so far changed."""

    run_id: str
    status: str
    reason: str | None = None
    review: CodeReview | None = None

    def to_dict(self) -> dict[str, Any]:
        """The round as the account writes it."""
        return {
            "runId": self.run_id,
            "status": self.status,
            "reason": self.reason,
            "review": self.review.to_dict() if self.review is not None else None,
        }


@dataclass
class LoopOutcome:
    """How the loop ended: its status, each round, and the test run.

    Status: `completed` (approved, tests passed), `not_approved` (no approval within the
    rounds), `tests_failed` (approved, tests failed or could not run), or the status of an
    implementation run that did not complete (`incomplete`, `failed`, `cancelled`, …), which
    ends the loop before its review.
    """

    loop_id: str
    session_id: str
    status: str = "completed"
    reason: str | None = None
    rounds: list[Round] = field(default_factory=list)
    tests: dict[str, Any] | None = None
    log_path: str | None = None

    @property
    def approved(self) -> bool:
        """Whether the last review approved the change."""
        last = self.rounds[-1].review if self.rounds else None
        return bool(last is not None and last.approved)

    def to_dict(self) -> dict[str, Any]:
        """The account as JSON (the editor's `toolgate/reviewLoop`, `--json`)."""
        return {
            "loopId": self.loop_id,
            "sessionId": self.session_id,
            "status": self.status,
            "reason": self.reason,
            "approved": self.approved,
            "rounds": [r.to_dict() for r in self.rounds],
            "tests": self.tests,
            "runLog": self.log_path,
        }

    def account_lines(self) -> list[str]:
        """The account, a line per round, then the tests and the status."""
        lines = []
        for n, item in enumerate(self.rounds, 1):
            verdict = item.review.summary() if item.review is not None else "not reviewed"
            lines.append(f"round {n}: run {item.run_id} {item.status}; review {verdict}")
        if self.tests is not None:
            s = self.tests.get("summary") or {}
            if s:
                lines.append(
                    f"tests: {s.get('passed', 0)} passed, {s.get('failed', 0)} failed, "
                    f"{s.get('errors', 0)} errors"
                )
            else:
                lines.append(f"tests: did not run: {self.tests.get('error')}")
        if self.log_path:
            lines.append(f"loop log: {self.log_path}")
        reason = f" — {self.reason}" if self.reason else ""
        lines.append(f"review loop {self.status}{reason}")
        return lines


class ReviewLoop:
    """The loop for one task in one workspace, driven through a front end's session service."""

    def __init__(
        self,
        service: SessionService,
        config: Config,
        reviewer: Reviewer,
        bus: EventBus,
        *,
        buffers: Any = None,
        trusted: bool = True,
        on_test_run: Callable[[Any], None] | None = None,
        on_turn: Callable[[Claim | None], None] | None = None,
        on_review: Callable[[CodeReview], None] | None = None,
    ) -> None:
        self.service = service
        self.config = config
        self.reviewer = reviewer
        self.bus = bus
        self.buffers = buffers
        self.trusted = trusted
        self.on_test_run = on_test_run
        self.on_turn = on_turn or (lambda claim: None)
        self.on_review = on_review or (lambda review: None)
        self.loop_id = new_id("loop")
        self.max_rounds = int(config.review.get("max_rounds", DEFAULT_MAX_ROUNDS))

    def _notice(self, message: str) -> None:
        self.bus.emit(NOTICE, self.loop_id, message=message)

    async def run(self, task: str, session_id: str | None = None) -> LoopOutcome:
        """Run the loop to its account (SetupError, ConfigError and SessionError pass up)."""
        claim = self.service.claim(session_id, new=session_id is None)
        outcome = LoopOutcome(self.loop_id, claim.session_id)
        self.runlog = RunLog(
            self.service.root,
            self.loop_id,
            task,
            self.config.model.name or "",
            self.config.model.base_url or "",
            "review_loop",
            Redactor(self.config.api_key),
            profile="review-loop",
        )
        outcome.log_path = str(self.runlog.path)
        try:
            await self._rounds(task, claim, outcome)
        except asyncio.CancelledError:
            outcome.status, outcome.reason = "cancelled", "cancelled by the person"
            self._finish(outcome)
            raise
        except Exception as exc:
            outcome.status, outcome.reason = "failed", str(exc)
            self._finish(outcome)
            raise
        self._finish(outcome)
        return outcome

    async def _rounds(self, task: str, claim: Any, outcome: LoopOutcome) -> None:
        """Implement and review until approved or out of rounds, then test; sets the status."""
        root = self.service.root
        run_ids: list[str] = []
        prompt = task
        while True:
            if outcome.rounds:
                claim = self.service.claim(outcome.session_id)
            self.on_turn(claim)  # a cancel from here on stops this turn, its set-up included
            try:
                ran = await self.service.turn(
                    claim,
                    prompt,
                    config=self.config,
                    reviewer=self.reviewer,
                    bus=self.bus,
                    hooks=TurnHooks(on_test_run=self.on_test_run),
                    buffers=self.buffers,
                    trusted=self.trusted,
                )
            finally:
                self.on_turn(None)
            run_ids.append(ran.run_id)
            item = Round(ran.run_id, ran.status, ran.reason)
            outcome.rounds.append(item)
            if ran.status != "completed":
                outcome.status, outcome.reason = ran.status, ran.reason
                return
            # The turn's endpoint: the service keeps the embedded model it started for it.
            endpoint = await self.service.endpoint(self.config)
            request = review_request(self.config, runs_changes(root, run_ids))
            files = len(request.files_changed)
            self._notice(f"reviewing the change to {files} file{'' if files == 1 else 's'}…")
            try:
                item.review = await review_in_workspace(
                    root, self.config, request, self._notice, endpoint=endpoint
                )
            except ReviewError as exc:
                outcome.status, outcome.reason = "failed", f"the review failed: {exc}"
                return
            self._reviewed(item.review)
            if item.review.approved or len(outcome.rounds) >= self.max_rounds:
                break
            prompt = FIX_PROMPT.format(comments=item.review.feedback())
        await self._tests(outcome)
        if not outcome.approved:
            outcome.status = "not_approved"
            outcome.reason = f"no approval after {len(outcome.rounds)} review(s)"

    def _reviewed(self, review: CodeReview) -> None:
        self._notice(f"review: {review.summary()}")
        for comment in review.comments:
            self._notice(f"  {comment.path}:{comment.line} {comment.severity} {comment.message}")
        self.bus.emit(CODE_REVIEWED, self.loop_id, review=review.to_dict())
        self.on_review(review)

    async def _tests(self, outcome: LoopOutcome) -> None:
        command = str(self.config.review.get("test_command") or DEFAULT_TEST_COMMAND)
        try:
            result = await self.service.run_tests(
                command,
                reviewer=self.reviewer,
                bus=self.bus,
                trusted=self.trusted,
                buffers=self.buffers,
                on_test_run=self.on_test_run,
            )
        except ValueError as exc:
            outcome.tests = {"command": command, "error": str(exc)}
            outcome.status, outcome.reason = "tests_failed", f"the tests could not run: {exc}"
            return
        data = result.data if isinstance(result.data, dict) else {}
        outcome.tests = {
            "command": command,
            "summary": data.get("summary"),
            "passed": bool(data.get("passed")),
            "error": result.error,
        }
        if not data.get("passed"):
            outcome.status = "tests_failed"
            outcome.reason = result.error or "the tests failed"

    def _finish(self, outcome: LoopOutcome) -> None:
        account = outcome.to_dict()
        self.runlog.set(
            session_id=outcome.session_id, rounds=account["rounds"], tests=account["tests"]
        )
        metrics = {
            "rounds": len(outcome.rounds),
            "review_llm_calls": sum(
                int(r.review.metrics.get("llm_calls", 0)) for r in outcome.rounds if r.review
            ),
        }
        self.runlog.finish(outcome.status, outcome.reason, metrics)
        for line in outcome.account_lines():
            self._notice(line)
        self.bus.emit(REVIEW_LOOP_FINISHED, self.loop_id, **outcome.to_dict())
