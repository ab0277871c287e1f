"""Model servers already running on this machine, found on their usual ports.

Only 127.0.0.1 is asked, each port once with `GET /v1/models` and a short timeout: nothing
leaves the machine, and a port where nothing listens costs a refused connection.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

# The ports these servers listen on unless told otherwise, in the order they are offered.
KNOWN_SERVERS: tuple[tuple[str, int], ...] = (
    ("Ollama", 11434),
    ("LM Studio", 1234),
    ("llama.cpp", 8080),
    ("vLLM", 8000),
)
PROBE_TIMEOUT_SECONDS = 1.5


@dataclass(frozen=True)
class FoundServer:
    """A server that answered with a model list: what it probably is, where, and its models."""

    name: str
    base_url: str
    models: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the editor and `toolgate doctor --json` show."""
        return {"name": self.name, "baseUrl": self.base_url, "models": list(self.models)}


async def find_local_servers(
    known: tuple[tuple[str, int], ...] = KNOWN_SERVERS,
    timeout: float = PROBE_TIMEOUT_SECONDS,
) -> list[FoundServer]:
    """The known ports on 127.0.0.1 that answer `/v1/models` with a list, in `known`'s order."""
    found = await asyncio.gather(*(_probe(name, port, timeout) for name, port in known))
    return [server for server in found if server is not None]


async def _probe(name: str, port: int, timeout: float) -> FoundServer | None:
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        models = await list_models(base_url, None, timeout)
    except ModelListError:
        # Nothing there, something that is not a model server, or one that wants a key:
        # none of them is a server the person can pick without more.
        return None
    return FoundServer(name, base_url, tuple(models))


class ModelListError(Exception):
    """`/models` gave no list: no answer (`status` None), an HTTP error, or not a model list."""

    def __init__(self, message: str, status: int | None = None, answered: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.answered = answered  # the server answered, just not with a list


async def list_models(base_url: str, api_key: str | None, timeout: float) -> list[str]:
    """The ids `base_url`'s `/models` lists, in its order; raises ModelListError."""
    return await asyncio.to_thread(_list_models, base_url, api_key, timeout)


def _list_models(base_url: str, api_key: str | None, timeout: float) -> list[str]:
    url = base_url.rstrip("/") + "/models"
    try:
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
    except ValueError as exc:  # not a URL urllib can open
        raise ModelListError(f"cannot ask {url}: {exc}") from None
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    # A proxy from the environment must not stand between this machine and its own servers.
    loopback = urlsplit(base_url).hostname in ("127.0.0.1", "localhost", "::1")
    opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if loopback else []))
    try:
        with opener.open(request, timeout=timeout) as response:
            body = response.read(4 * 1024 * 1024)
    except urllib.error.HTTPError as exc:
        raise ModelListError(f"HTTP {exc.code} from {url}", exc.code, answered=True) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ModelListError(f"no answer from {url}: {reason}") from None
    try:
        payload = json.loads(body)
    except ValueError:
        raise ModelListError(
            f"{url} answered with something that is not JSON", answered=True
        ) from None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise ModelListError(f"{url} answered without a list of models", answered=True)
    return [str(item["id"]) for item in data if isinstance(item, dict) and "id" in item]
