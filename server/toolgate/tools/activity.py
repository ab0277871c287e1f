"""Activities: the code registered under a tool's name, and what they may use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from toolgate.records import ToolResult
from toolgate.runner.sandbox import SandboxSettings
from toolgate.workspace import Workspace


@dataclass
class ActivitySettings:
    """Limits and lists that activities obey."""

    allowed_commands: list[tuple[str, ...]] = field(
        default_factory=lambda: [
            ("pytest",),
            ("python", "-m", "pytest"),
            ("python3", "-m", "pytest"),
            ("py.test",),
        ]
    )
    command_timeout_seconds: float = 300.0
    max_output_bytes: int = 64_000
    trusted: bool = True  # False in a restricted (untrusted) workspace: nothing executes
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)  # for tests and commands


async def _nothing_to_sync() -> list[str]:
    return []


async def _nothing_to_fetch(path: str) -> None:
    return None


@dataclass
class ActivityContext:
    """What an activity may touch: the workspace, its settings, and hooks of the front end."""

    workspace: Workspace
    settings: ActivitySettings
    run_id: str = ""
    # Called before tests run, so accepted edits still in editor buffers reach the disk;
    # returns notes for the model (e.g. files whose buffers differ from disk).
    before_tests: Callable[[], Awaitable[list[str]]] = _nothing_to_sync
    # Called with a path before the file is read, so a front end that reads through the editor
    # (ACP's fs/read_text_file) can put the editor's text into the workspace's buffers first.
    before_read: Callable[[str], Awaitable[None]] = _nothing_to_fetch
    # Called with the structured result of every test run (the language server turns it
    # into diagnostics).
    on_test_run: Callable[[Any], None] | None = None
    # Called with (tool name, line) for each line a tool writes to stderr while it runs.
    on_progress: Callable[[str, str], None] | None = None


@runtime_checkable
class Activity(Protocol):
    """Runs a tool's call once the gate has let it through."""

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Do the work and describe the outcome."""
        ...


@dataclass(frozen=True)
class FileChange:
    """What a file-changing call would do, worked out before anybody decides on it."""

    path: str
    original: str | None  # None for a new file
    proposed: str


@runtime_checkable
class ChangeActivity(Activity, Protocol):
    """An activity whose effect is a file change that the person reviews as a diff."""

    async def plan(self, ctx: ActivityContext, args: dict[str, Any]) -> FileChange | ToolResult:
        """Work out the change, or a result explaining why there is none to make."""
        ...


@runtime_checkable
class CommandActivity(Activity, Protocol):
    """An activity that runs a program; the gate checks its argv against the allow-list."""

    def argv(self, ctx: ActivityContext, args: dict[str, Any]) -> list[str]:
        """The argv this call would run (raises CommandRefused when it cannot be split)."""
        ...
