"""A run's count of its model requests, for requests made outside its own loop.

A latent tool is answered by asking the model again from inside a tool call. Those requests
count like the run's own: toward `limits.max_llm_calls`, and in the run's token usage. Who
makes one asks the run's meter first (`start_request`, which refuses once the limit is
reached) and hands it the request's last delta (`finish_request`, which records its usage).
The run's `RunMeter` (`agent/meter.py`) is the meter; a request no run stands behind
(`toolgate review`) is `UNMETERED`.
"""

from __future__ import annotations

from typing import Protocol

from toolgate.model.client import StreamDelta


class RequestRefused(Exception):
    """No model request is left to the run: the message names the limit."""


class RequestMeter(Protocol):
    """Where a model request made on a run's behalf is counted."""

    def start_request(self) -> int:
        """Count one request before it is made, and return its number in the run.

        Raises RequestRefused when the run's limit is reached: the request is not made.
        """
        ...

    def finish_request(self, n: int, delta: StreamDelta) -> None:
        """Record what request `n` used, from its last delta (`done`, with `usage` if told)."""
        ...


class _Unmetered:
    """No limit, nothing recorded."""

    def start_request(self) -> int:
        return 0

    def finish_request(self, n: int, delta: StreamDelta) -> None:
        pass


UNMETERED: RequestMeter = _Unmetered()
