"""Latent tools answered inside a run: a nested model request against the tool's output schema.

A latent tool has an interface and no activity. Registered with an answerer
(`ToolRegistry.add_latent`), a call to it is answered by the answerer — which asks the model
again, against the tool's output schema — and the answer, checked against that schema, is the
call's result. The gate treats it as a read: no prompt, recorded in the run log like any call.

An answerer may itself call another latent tool (`LatentContext.call`); that answer is one
level deeper. `tool_calling.max_depth` bounds the levels (how deeply the answers' JSON may
nest is `tool_calling.max_argument_depth`, a separate setting): a call beyond it is refused
with a result that says so, which the caller (the model, or the answerer above) reads.

    async def answer(ctx: LatentContext, args: dict[str, Any]) -> ToolResult: ...
    registry.add_latent(MY_TOOL, answer)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from toolgate.config import Config
from toolgate.model.client import ModelSettings
from toolgate.model.meter import UNMETERED, RequestMeter, RequestRefused
from toolgate.records import ToolResult
from toolgate.tools.registry import ToolRegistry


def _same(text: str) -> str:
    return text


def _quiet(message: str) -> None:
    """A notice nobody reads."""


@dataclass
class LatentContext:
    """What an answerer may use: the model to ask, the workspace, the run, and its depth.

    `settings` reach the run's endpoint (copy them before changing any: they are shared);
    `depth` is this answer's level (1 for a call the run's model made); `config` is the
    run's configuration (e.g. `[review]` defaults); `notice` reaches the run's events;
    `meter` counts every model request the answer makes as one of the run's (tell it before
    each request and hand it each request's last delta; it refuses past `max_llm_calls`).
    """

    settings: ModelSettings
    root: Path
    run_id: str
    config: Config
    registry: ToolRegistry
    depth: int = 1
    structured: bool = True
    notice: Callable[[str], None] = _quiet
    redact: Callable[[str], str] = _same
    meter: RequestMeter = UNMETERED

    @property
    def max_depth(self) -> int:
        """`tool_calling.max_depth`: the deepest level a latent answer may reach."""
        return self.config.tool_calling.max_depth

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Answer another latent tool from inside this answer, one level deeper."""
        return await answer_latent(replace(self, depth=self.depth + 1), name, arguments)


# What `ToolRegistry.add_latent` keeps, with the context it is called with.
Answerer = Callable[[LatentContext, dict[str, Any]], Awaitable[ToolResult]]


@dataclass
class LatentAnswers:
    """How a run's gate answers latent tools: the endpoint to ask, and the run around it."""

    settings: ModelSettings
    config: Config
    structured: bool = True
    notice: Callable[[str], None] = _quiet
    redact: Callable[[str], str] = _same

    async def answer(
        self,
        registry: ToolRegistry,
        root: Path,
        run_id: str,
        name: str,
        arguments: dict[str, Any],
        meter: RequestMeter = UNMETERED,
    ) -> ToolResult:
        """The answer to a call the run's model made (level 1); `meter` counts its requests."""
        ctx = LatentContext(
            settings=self.settings,
            root=root,
            run_id=run_id,
            config=self.config,
            registry=registry,
            structured=self.structured,
            notice=self.notice,
            redact=self.redact,
            meter=meter,
        )
        return await answer_latent(ctx, name, arguments)


async def answer_latent(ctx: LatentContext, name: str, arguments: dict[str, Any]) -> ToolResult:
    """Answer latent tool `name` at `ctx.depth`: refused beyond the limit, checked after.

    Never raises: a refusal (too deep, or no model request left to the run), an answerer's
    failure or an answer that breaks the output schema is a failed result the caller reads.
    """
    if ctx.depth > ctx.max_depth:
        return ToolResult.fail(
            f"{name} is refused: it would be a latent answer {ctx.depth} levels deep, and "
            f"tool_calling.max_depth is {ctx.max_depth}",
            suggestions=[f"Answer {name} yourself in your reply instead of calling it."],
        )
    tool = ctx.registry.get(name)
    answerer = ctx.registry.answerer(name)
    if tool is None or answerer is None:
        return ToolResult.fail(
            f"{name} is a latent tool with nothing to answer it here; answer it yourself "
            "in your reply"
        )
    try:
        result = await answerer(ctx, arguments)
    except RequestRefused as exc:
        return ToolResult.fail(f"{name} is refused: its answer needs a model request, and {exc}")
    except Exception as exc:  # an answerer's bug is a result the model reads, never a crash
        return ToolResult.fail(f"{name} failed inside Toolgate: {type(exc).__name__}: {exc}")
    if result.success and tool.output is not None:
        problem = _first_error(tool.output, result.data)
        if problem is not None:
            return ToolResult.fail(f"{name}'s answer does not match its output schema: {problem}")
    return result


def _first_error(schema: dict[str, Any], data: Any) -> str | None:
    errors = sorted(Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if not errors:
        return None
    where = "/".join(str(p) for p in errors[0].path) or "(answer)"
    return f"{where}: {errors[0].message}"
