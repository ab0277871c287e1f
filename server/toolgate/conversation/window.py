"""What context window an endpoint serves, asked of the endpoint itself.

vLLM lists `max_model_len` for each model in `GET /v1/models`; llama.cpp's server answers
`GET /props` with `default_generation_settings.n_ctx`. Other servers say nothing, and the
caller falls back to its default.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

PROBE_SECONDS = 3.0


async def endpoint_context_tokens(
    base_url: str, model: str | None, api_key: str | None = None
) -> int | None:
    """The window the endpoint reports for `model`, or None when it does not say."""
    return await asyncio.to_thread(_probe, base_url, model, api_key)


def _probe(base_url: str, model: str | None, api_key: str | None) -> int | None:
    base = base_url.rstrip("/")
    server_root = base[: -len("/v1")] if base.endswith("/v1") else base
    found = _from_models(_get(f"{base}/models", api_key), model)
    return found or _from_props(_get(f"{server_root}/props", api_key))


def _get(url: str, api_key: str | None) -> Any:
    # A plain GET with the standard library: two small JSON documents need no HTTP client.
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_SECONDS) as response:
            return json.loads(response.read(1_000_000))
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _from_models(doc: Any, model: str | None) -> int | None:
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        return None
    for item in data:
        if not isinstance(item, dict):
            continue
        if model and item.get("id") != model and len(data) > 1:
            continue
        value = item.get("max_model_len")
        if isinstance(value, int) and value > 0:
            return value
    return None


def _from_props(doc: Any) -> int | None:
    if not isinstance(doc, dict):
        return None
    settings = doc.get("default_generation_settings")
    for source in (settings, doc):
        if isinstance(source, dict):
            value = source.get("n_ctx")
            if isinstance(value, int) and value > 0:
                return value
    return None
