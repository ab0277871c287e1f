"""A run's meter: the model requests it made, and the tokens the endpoint said they used."""

from __future__ import annotations

from typing import Any

from toolgate.agent.events import LATENT_REQUEST, LLM_CALL, LLM_USAGE, EventBus
from toolgate.config import Limits
from toolgate.model.client import StreamDelta
from toolgate.model.meter import RequestRefused


class RunMeter:
    """Counts a run's model requests toward `limits.max_llm_calls` and logs their tokens.

    Every request counts: the turns, the summaries of earlier turns, and the nested requests of
    latent answers, which tell the meter before each one (it is their `RequestMeter`).
    """

    def __init__(self, run_id: str, bus: EventBus, limits: Limits) -> None:
        self.run_id = run_id
        self.bus = bus
        self.limits = limits
        self.calls = 0  # the requests made so far
        self.context_tokens = 0  # the endpoint's count of the latest request it counted

    def count(self, mode: str) -> int:
        """Count one model request of this run (`llm_call`), and return its number."""
        self.calls += 1
        self.bus.emit(LLM_CALL, self.run_id, mode=mode, n=self.calls)
        return self.calls

    def used(self, delta: StreamDelta, n: int, step: dict[str, Any] | None) -> None:
        """Log the tokens the endpoint said request `n` used (the account adds them up).

        The step the request was made for keeps them too.
        """
        if not (delta.done and delta.usage):
            return
        self.bus.emit(LLM_USAGE, self.run_id, n=n, **delta.usage)
        if step is not None:
            step["usage"] = dict(delta.usage)
        usage = delta.usage
        total = usage.get("total_tokens") or (
            usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        )
        self.context_tokens = total or self.context_tokens

    def start_request(self) -> int:
        """Count a latent answer's model request toward `limits.max_llm_calls`.

        Returns its number in the run; raises RequestRefused, and counts nothing, when the
        run has made all the requests the limit allows.
        """
        if self.calls >= self.limits.max_llm_calls:
            raise RequestRefused(
                f"the run has made all {self.limits.max_llm_calls} model requests "
                "limits.max_llm_calls allows"
            )
        return self.count(LATENT_REQUEST)

    def finish_request(self, n: int, delta: StreamDelta) -> None:
        """Record the tokens latent request `n` used, as the run's own requests are."""
        if not (delta.done and delta.usage):
            return
        # A nested request: its tokens count for the run, not for the step's own request.
        self.bus.emit(LLM_USAGE, self.run_id, n=n, mode=LATENT_REQUEST, **delta.usage)
