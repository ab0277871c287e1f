"""The latent tools a run can offer, each with what answers it. A new one is one entry here.

A latent tool is offered when `tool_calling.latent_tools` names it or the run's profile lists
it in its `tools`; the gate then answers its calls with a nested model request
(`toolgate.agent.latent`) instead of telling the model to answer it itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from toolgate.agent.latent import Answerer, LatentAnswers
from toolgate.code_review.latent import answer_review
from toolgate.code_review.tool import REVIEW_CODE
from toolgate.config import Config, ConfigError
from toolgate.model.client import ModelSettings
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import Tool

# name → (the interface with its output schema, the answerer)
LATENT_TOOLS: dict[str, tuple[Tool, Answerer]] = {
    "review_code": (REVIEW_CODE, answer_review),
}


def add_latent_tools(
    registry: ToolRegistry, config: Config, profile_tools: list[str] | None
) -> None:
    """Add the latent tools the configuration or the profile asks for to `registry`.

    Raises ConfigError when `tool_calling.latent_tools` names no latent tool.
    """
    wanted = list(config.tool_calling.latent_tools)
    unknown = [name for name in wanted if name not in LATENT_TOOLS]
    if unknown:
        raise ConfigError(
            f"tool_calling.latent_tools: unknown latent tool {unknown[0]!r}; "
            f"known: {', '.join(LATENT_TOOLS)}"
        )
    wanted += [name for name in profile_tools or [] if name in LATENT_TOOLS]
    for name in wanted:
        tool, answerer = LATENT_TOOLS[name]
        if name not in registry:
            registry.add_latent(tool, answerer)


def latent_answers(
    config: Config,
    settings: ModelSettings,
    notice: Callable[[str], None],
    redact: Callable[[str], str],
) -> LatentAnswers:
    """How a run's gate answers latent tools: with the run's endpoint and model."""
    # The run's request extras (the embedded model's tool grammar) would shape the answer.
    nested = replace(settings, extra_body=None, response_format=None, tool_choice="auto")
    return LatentAnswers(settings=nested, config=config, notice=notice, redact=redact)
