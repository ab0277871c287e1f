"""The endpoint every agent is pointed at: the embedded model by default, or any URL.

The embedded model is served the way Toolgate serves it (`toolgate.model.local`): the
llama-cpp-python server that `toolgate[local]` installs, the model's own chat template, on
127.0.0.1 only. The benchmark gives it a larger window than Toolgate's default (the peers'
fixed prompts alone are 8,000 to 20,000 tokens), the same for every agent.
"""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

# Qwen2.5-Coder's own limit; the peers' prompts do not fit Toolgate's default 8192.
DEFAULT_N_CTX = 32768


@dataclass
class Endpoint:
    """Where the model answers, and what is known about it for the results."""

    base_url: str
    model: str
    info: dict[str, Any] = field(default_factory=dict)
    stop: Any = None  # a callable that ends a server we started


def embedded(n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None) -> Endpoint:
    """Start the embedded model's server (blocks until it answers)."""
    from toolgate.model.local import LocalModelServer
    from toolgate.model.local_assets import MODEL_TITLE, RUNTIME_REQUIREMENT

    server = LocalModelServer(n_ctx=n_ctx, n_threads=n_threads)
    server.start_sync()
    info = {
        "kind": "embedded",
        "model_title": MODEL_TITLE,
        "server": "llama-cpp-python " + _version("llama-cpp-python"),
        "pinned": RUNTIME_REQUIREMENT,
        "chat_template": "the model's own (from the GGUF)",
        "n_ctx": server.n_ctx,
        "n_threads": server.n_threads,
        "startup_seconds": round(server.startup_seconds or 0.0, 1),
        "log": str(server.log_path),
    }
    return Endpoint(server.base_url, server.model, info, server.stop_sync)


def remote(base_url: str, model: str | None) -> Endpoint:
    """An endpoint already running at base_url; the model is its first one if not given."""
    listed = served_models(base_url)
    chosen = model or (listed[0]["id"] if listed else "")
    if not chosen:
        raise SystemExit(f"{base_url} lists no model; pass --model")
    info = {"kind": "url", "base_url": base_url, "models": listed}
    return Endpoint(base_url.rstrip("/"), chosen, info)


def served_models(base_url: str) -> list[dict[str, Any]]:
    """What GET /models lists (empty when the endpoint does not answer it)."""
    request = urllib.request.Request(base_url.rstrip("/") + "/models")
    key = os.environ.get("OPENAI_API_KEY")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            doc = json.loads(reply.read())
    except (OSError, ValueError):
        return []
    return [
        {"id": str(m.get("id")), "owned_by": str(m.get("owned_by", ""))}
        for m in doc.get("data", [])
        if isinstance(m, dict)
    ]


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"
