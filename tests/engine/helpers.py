"""Helpers for the engine tests: drive a real run, snapshot a tree, script a reviewer."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.scripted_model import ScriptedModel

from toolgate.agent.events import Event, EventBus
from toolgate.agent.loop import AgentRun, RunOutcome
from toolgate.config import load_config
from toolgate.review.proposal import Proposal
from toolgate.review.reviewer import (
    Approval,
    ApprovalRequest,
    AutoReviewer,
    DiskReviewer,
    Reviewer,
)
from toolgate.session import Endpoint, RunSetup, SessionService, create_run
from toolgate.tools.registry import ToolRegistry
from toolgate.workspace import Workspace


def fast_pytest(monkeypatch: Any) -> None:
    """Real pytest in the workspace, without the third-party plugins of this venv (seconds saved).

    The child inherits the environment; Toolgate's own report plugin is loaded with `-p`
    and is not affected.
    """
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def snapshot(*roots: Path, skip: tuple[str, ...] = (".toolgate",)) -> dict[str, Any]:
    """Every entry below the roots: kind, size, mtime, content hash or link target."""
    found: dict[str, Any] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            rel_dir = Path(dirpath).relative_to(root)
            dirnames[:] = [d for d in dirnames if (rel_dir / d).parts[0] not in skip]
            for name in [*dirnames, *filenames]:
                path = Path(dirpath) / name
                rel = f"{root.name}/{(rel_dir / name).as_posix()}"
                if (rel_dir / name).parts[0] in skip:
                    continue
                st = path.lstat()
                if path.is_symlink():
                    found[rel] = ("link", os.readlink(path), st.st_mtime_ns)
                elif path.is_dir():
                    found[rel] = ("dir", st.st_mtime_ns, st.st_mode)
                else:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                    found[rel] = ("file", st.st_size, st.st_mtime_ns, st.st_mode, digest)
        st = root.lstat()
        found[f"{root.name}/"] = ("root", st.st_mtime_ns)
    return found


@dataclass
class ScriptedReviewer(DiskReviewer):
    """A person who answers from a script: `confirm` answers and change decisions, in order.

    Each entry of `changes` is None (accept all), a set of hunk indexes, or a reason string
    (reject). Each entry of `confirms` is True, False, or a reason string (refuse).
    """

    workspace: Workspace
    changes: list[Any] = field(default_factory=list)
    confirms: list[Any] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    requests: list[ApprovalRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.workspace)

    async def decide(self, proposal: Proposal) -> tuple[set[int] | None, str | None]:
        """Answer with the next scripted decision."""
        self.proposals.append(proposal)
        answer = self.changes.pop(0) if self.changes else "no scripted answer"
        if isinstance(answer, str):
            return set(), answer
        return answer, None

    async def confirm(self, request: ApprovalRequest) -> Approval:
        """Answer with the next scripted yes or no."""
        self.requests.append(request)
        answer = self.confirms.pop(0) if self.confirms else "no scripted answer"
        if isinstance(answer, str):
            return Approval(False, answer)
        return Approval(bool(answer))


@dataclass
class Driven:
    """What a driven run left behind."""

    outcome: RunOutcome
    events: list[Event]
    log: dict[str, Any]
    run: AgentRun

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        """Every event of one type as its JSON form (type, run_id, time and fields)."""
        return [e.to_dict() for e in self.events if e.type == type_]

    def calls(self) -> list[dict[str, Any]]:
        """Every call recorded in the run log, in order."""
        return [c for step in self.log["steps"] for c in step["calls"]]


async def build(
    repo: Path,
    scripted: ScriptedModel,
    *,
    reviewer: Reviewer | Callable[[Workspace], Reviewer] | None = None,
    overrides: dict[str, Any] | None = None,
    registry: ToolRegistry | None = None,
    task: str = "Do the task.",
    model: str | None = "scripted-model",
) -> tuple[AgentRun, list[Event]]:
    """Assemble a run the way the front ends do, against the scripted server."""
    config = load_config(repo, overrides=overrides)
    workspace = Workspace(repo, max_file_bytes=config.limits.max_file_bytes)
    if reviewer is None:
        reviewer = AutoReviewer(workspace)
    elif isinstance(reviewer, type) or not isinstance(reviewer, Reviewer):
        reviewer = reviewer(workspace)  # a class or factory taking the workspace
    bus = EventBus()
    events: list[Event] = []
    bus.subscribe(events.append)
    setup = RunSetup(root=repo, config=config, reviewer=reviewer, bus=bus, registry=registry)
    run = await create_run(setup, task, Endpoint(scripted.base_url, model))
    return run, events


async def drive(repo: Path, scripted: ScriptedModel, **kwargs: Any) -> Driven:
    """Build a run, run it to the end, and read its log."""
    run, events = await build(repo, scripted, **kwargs)
    try:
        outcome = await run.run()
    finally:
        await run.model.close()
    log = json.loads(Path(outcome.log_path or "").read_text("utf-8"))
    return Driven(outcome, events, log, run)


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every role=tool message of a request, content parsed, with its tool_call_id."""
    return [
        {**json.loads(m["content"]), "tool_call_id": m["tool_call_id"]}
        for m in body.get("messages", [])
        if m.get("role") == "tool"
    ]


def results_read(scripted: ScriptedModel) -> list[dict[str, Any]]:
    """The tool results the model read by the end of the run (from its last request)."""
    return tool_messages(scripted.requests[-1])


def system_text(body: dict[str, Any]) -> str:
    """The system prompt of a request."""
    return next(m["content"] for m in body["messages"] if m["role"] == "system")


def tool_names(body: dict[str, Any]) -> list[str]:
    """The names of the tools a request offered (empty when none)."""
    return [t["function"]["name"] for t in body.get("tools") or []]


def answer(text: str = "Done.") -> dict[str, Any]:
    """A script entry: a final plain-text answer."""
    return {"content": text}


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A script entry with several native tool calls in one turn."""
    return {
        "tool_calls": [
            {"id": f"call_{i}_{name}", "name": name, "arguments": args}
            for i, (name, args) in enumerate(pairs)
        ]
    }


async def ask_in_session(
    service: SessionService,
    scripted: ScriptedModel,
    repo: Path,
    task: str,
    session_id: str | None,
    overrides: dict[str, Any] | None = None,
) -> tuple[str, Any]:
    """One turn of `service` (a new session when `session_id` is None): its id and outcome."""
    config = load_config(repo, overrides=overrides)
    claim = service.claim(session_id, new=session_id is None)
    outcome = await service.turn(
        claim,
        task,
        config=config,
        reviewer=AutoReviewer(Workspace(repo)),
        bus=EventBus(),
        endpoint=Endpoint(scripted.base_url, scripted.model),
    )
    return claim.session_id, outcome
