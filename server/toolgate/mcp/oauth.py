"""OAuth 2.1 for remote MCP servers, as the MCP authorization specification describes it.

The SDK's `OAuthClientProvider` does the protocol: on a 401 (or a 403 `insufficient_scope`) it
discovers the protected resource's and the authorization server's metadata, picks the scopes,
registers the client (a client ID metadata document, dynamic registration, or the pre-registered
`client_id` from the configuration), runs the authorization code flow with PKCE, authenticates
at the token endpoint as registered, and refreshes the token when it runs out. What is
Toolgate's here:

- **the browser step**: the authorization URL goes to the front end (its reviewer's
  `open_url` when it has one; else it is printed on stderr and opened with the system's
  browser, as in the terminal), and the answer comes back to a one-shot listener on
  `http://127.0.0.1:PORT/callback` — the redirect URI;
- **where tokens live**: one file per server under `$XDG_STATE_HOME/toolgate/mcp-oauth/`,
  readable by the user only (0600, in a 0700 folder), written whole or not at all. Tokens
  never reach the model, the run log or an editor: only this module and the HTTP client see
  them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import socket
import sys
import time
import webbrowser
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from toolgate.trust import state_dir

log = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
# How long the person has to sign in before the call fails (nothing waits for ever).
SIGN_IN_SECONDS = 300.0
_SAFE = re.compile(r"[^A-Za-z0-9_-]")

ShowUrl = Callable[[str], Awaitable[None]]


def token_dir() -> Path:
    """Where the tokens of every remote server are kept."""
    return state_dir() / "mcp-oauth"


def token_path(name: str, url: str) -> Path:
    """One server's token file: its name, and a digest of its URL (a new URL: a new sign-in)."""
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return token_dir() / f"{_SAFE.sub('_', name)}-{digest}.json"


def _write_private(path: Path, data: dict[str, Any]) -> None:
    """Write `data` as JSON readable by the user only, replacing the file in one step."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class FileTokenStorage:
    """The SDK's `TokenStorage` over one private file per server.

    A pre-registered client (`client_id`, `client_secret` in the configuration) is the client
    it answers with, and is never written; a dynamically registered one is kept with the tokens.
    """

    def __init__(self, path: Path, preregistered: Any | None = None) -> None:
        self.path = path
        self.preregistered = preregistered

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _update(self, **fields: Any) -> None:
        data = self._read()
        data.update(fields)
        _write_private(self.path, data)

    async def get_tokens(self) -> Any:
        """The stored tokens, their lifetime counted from now (None when there are none)."""
        from mcp.shared.auth import OAuthToken

        stored = self._read().get("tokens")
        if not isinstance(stored, dict):
            return None
        expires_at = stored.pop("expires_at", None)
        if isinstance(expires_at, (int, float)):
            stored["expires_in"] = max(0, int(expires_at - time.time()))
        try:
            return OAuthToken.model_validate(stored)
        except ValueError:
            return None

    async def set_tokens(self, tokens: Any) -> None:
        """Keep new tokens, with the moment they run out."""
        data = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            data["expires_at"] = time.time() + int(tokens.expires_in)
        self._update(tokens=data)

    async def get_client_info(self) -> Any:
        """The pre-registered client, else the one registered earlier (None: register)."""
        from mcp.shared.auth import OAuthClientInformationFull

        if self.preregistered is not None:
            return self.preregistered
        stored = self._read().get("client")
        if not isinstance(stored, dict):
            return None
        try:
            return OAuthClientInformationFull.model_validate(stored)
        except ValueError:
            return None

    async def set_client_info(self, client_info: Any) -> None:
        """Keep a client the authorization server registered (a pre-registered one is not)."""
        if self.preregistered is not None and client_info.client_id == self.preregistered.client_id:
            return
        self._update(client=client_info.model_dump(mode="json", exclude_none=True))

    def redirect_port(self) -> int | None:
        """The loopback port the stored client was registered with, if any."""
        stored = self._read().get("client")
        uris = stored.get("redirect_uris") if isinstance(stored, dict) else None
        if isinstance(uris, list) and uris:
            port = urlsplit(str(uris[0])).port
            return port
        return None


class LoopbackCallback:
    """The redirect URI: a one-shot listener on 127.0.0.1 that takes the authorization's answer."""

    def __init__(self, port: int, server: str) -> None:
        self.port = port
        self.server = server
        self._listener: asyncio.Server | None = None
        self._answer: asyncio.Future[dict[str, str]] | None = None

    @property
    def redirect_uri(self) -> str:
        """The URI the authorization server sends the browser back to."""
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def listen(self) -> None:
        """Start listening (before the browser is sent off)."""
        await self.close()
        self._answer = asyncio.get_running_loop().create_future()
        self._listener = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = int(self._listener.sockets[0].getsockname()[1])  # port 0: the one it got

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readline(), 30)
            while (await asyncio.wait_for(reader.readline(), 30)) not in (b"\r\n", b"\n", b""):
                pass
            parts = request.decode("latin-1").split()
            target = urlsplit(parts[1]) if len(parts) >= 2 else None
            if target is None or target.path != CALLBACK_PATH:
                await _respond(writer, 404, "Not the sign-in callback.")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            answer = self._answer
            if answer is None or answer.done():
                await _respond(writer, 409, "This sign-in was already answered.")
                return
            answer.set_result(query)
            if "error" in query:
                await _respond(writer, 400, f"The sign-in failed: {query['error']}.")
            else:
                await _respond(writer, 200, f"Signed in to {self.server}. You can close this tab.")
        except (OSError, asyncio.TimeoutError, ValueError):
            pass
        finally:
            writer.close()

    async def wait(self, seconds: float = SIGN_IN_SECONDS) -> Any:
        """The authorization code, state and issuer the browser brought back."""
        from mcp.client.auth import OAuthFlowError
        from mcp.shared.auth import AuthorizationCodeResult

        assert self._answer is not None
        try:
            query = await asyncio.wait_for(asyncio.shield(self._answer), seconds)
        except asyncio.TimeoutError:
            raise OAuthFlowError(
                f"nobody signed in to {self.server} within {int(seconds)} seconds"
            ) from None
        finally:
            await self.close()
        if "error" in query:
            described = query.get("error_description") or query["error"]
            raise OAuthFlowError(f"the authorization server refused the sign-in: {described}")
        if not query.get("code"):
            raise OAuthFlowError("the sign-in came back without an authorization code")
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    async def close(self) -> None:
        """Stop listening."""
        if self._listener is not None:
            self._listener.close()
            with contextlib.suppress(Exception):
                await self._listener.wait_closed()
            self._listener = None


async def _respond(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = (f"<!doctype html><meta charset=utf-8><title>Toolgate</title><p>{text}</p>").encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}[status]
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def default_show(server: str) -> ShowUrl:
    """The terminal's browser step: print the URL, and open it in the system's browser."""

    async def show(url: str) -> None:
        print(f"toolgate: sign in to {server} in your browser: {url}", file=sys.stderr, flush=True)
        # Off the event loop: a browser command may run until the sign-in is done, and the
        # callback it leads to is served by this loop.
        asyncio.get_running_loop().run_in_executor(None, _open_browser, url)

    return show


def _open_browser(url: str) -> None:
    try:
        webbrowser.open(url)
    except Exception as exc:  # no browser here: the printed URL is the way
        log.debug("could not open a browser: %s", exc)


def provider(
    name: str,
    url: str,
    settings: Mapping[str, Any],
    show: ShowUrl,
) -> Any:
    """The httpx auth of one remote server: the SDK's OAuth client, with Toolgate's parts."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    server = f"the MCP server {name!r}"
    path = token_path(name, url)
    storage = FileTokenStorage(path)
    port = settings.get("redirect_port") or storage.redirect_port() or _free_port()
    callback = LoopbackCallback(int(port), server)
    redirect_uris: list[Any] = [callback.redirect_uri]
    client_id = settings.get("client_id")
    if client_id:
        secret = settings.get("client_secret")
        storage.preregistered = OAuthClientInformationFull(
            client_id=str(client_id),
            client_secret=str(secret) if secret else None,
            redirect_uris=redirect_uris,
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
        )
    metadata = OAuthClientMetadata(
        client_name="Toolgate",
        redirect_uris=redirect_uris,
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=settings.get("scope") or None,
    )

    async def redirect(authorization_url: str) -> None:
        await callback.listen()
        await show(authorization_url)

    class Provider(OAuthClientProvider):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            # Refresh a little before the token runs out, not at the last instant: a token
            # checked as valid here may have lapsed by the time the server reads it.
            context = self.context
            exact = context.update_token_expiry

            def early(token: Any) -> None:
                exact(token)
                if context.token_expiry_time is not None and token.expires_in:
                    context.token_expiry_time -= min(60.0, 0.1 * int(token.expires_in))

            context.update_token_expiry = early  # type: ignore[method-assign]

        async def _initialize(self) -> None:
            # Stored tokens keep their expiry, so one that ran out is refreshed, not sent.
            await super()._initialize()
            tokens = self.context.current_tokens
            if tokens is not None and tokens.expires_in is not None:
                self.context.update_token_expiry(tokens)

    return Provider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback.wait,
        client_metadata_url=settings.get("client_metadata_url") or None,
    )
