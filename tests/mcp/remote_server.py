"""A tiny real remote MCP server for the tests: Streamable HTTP, optionally behind OAuth.

    python remote_server.py PORT LOG [--oauth] [--token-seconds N]

Built on the SDK's low-level server, its Streamable HTTP app and (with --oauth) its
authorization server routes, with an in-memory provider that consents at once: the browser
that follows the authorization URL is sent straight back to the client's redirect URI. Every
event worth checking goes to LOG as a JSON line: each tool call (with the bearer token it came
with), each authorization, token and refresh.

Tools: `echo(text)`; `ask()`, which asks the client's person (elicitation) for a colour,
defaulting to blue; `drop_stream()`, which closes its SSE stream halfway through the call, so
the client must reconnect with Last-Event-ID to get the answer.
"""

from __future__ import annotations

import argparse
import json
import secrets
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    ProviderTokenVerifier,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.lowlevel import Server
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from toolgate.mcp.event_store import event_store

SCOPE = "tools"
QUESTION = "Which colour?"
COLOUR_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "colour": {"type": "string", "title": "Colour", "default": "blue"},
        "sure": {"type": "boolean", "default": True},
    },
    "required": ["colour"],
}


class Log:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, **event: Any) -> None:
        with self.path.open("a") as handle:
            handle.write(json.dumps(event) + "\n")


class Provider:
    """An authorization server that says yes at once, with short-lived access tokens."""

    def __init__(self, log: Log, token_seconds: int) -> None:
        self.log = log
        self.token_seconds = token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.access: dict[str, AccessToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.log(event="register", client_id=client_info.client_id)

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=str(client.client_id),
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.log(event="authorize", redirect_uri=str(params.redirect_uri))
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access = secrets.token_urlsafe(16)
        refresh = secrets.token_urlsafe(16)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.token_seconds,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=self.token_seconds,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.log(event="token")
        return self._issue(
            str(client.client_id), authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.log(event="refresh")
        return self._issue(
            str(client.client_id), scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)


def build(log: Log) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        obj = {"type": "object"}
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name="echo",
                    description="Echo a text back",
                    input_schema={**obj, "properties": {"text": {"type": "string"}}},
                ),
                types.Tool(name="ask", description="Ask the person a colour", input_schema=obj),
                types.Tool(
                    name="drop_stream",
                    description="Close the call's stream halfway",
                    input_schema=obj,
                ),
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        headers = getattr(ctx.request, "headers", {}) or {}
        log(
            event="call",
            tool=params.name,
            authorization=headers.get("authorization"),
            session=headers.get("mcp-session-id"),
        )
        arguments = params.arguments or {}
        if params.name == "echo":
            text = f"echo: {arguments.get('text', '')}"
        elif params.name == "ask":
            if getattr(ctx.session, "can_send_request", True):
                reply = await ctx.session.elicit_form(
                    QUESTION, COLOUR_FORM, related_request_id=ctx.request_id
                )
            else:
                # Protocol 2026-07-28: the question goes back as the call's result, and the
                # client's retry of the call carries the answer.
                reply = (getattr(params, "input_responses", None) or {}).get("colour")
                if reply is None:
                    form = types.ElicitRequestFormParams(
                        message=QUESTION, requested_schema=COLOUR_FORM
                    )
                    return types.InputRequiredResult(
                        input_requests={"colour": types.ElicitRequest(params=form)}
                    )
            text = f"{reply.action}: {json.dumps(reply.content or {}, sort_keys=True)}"
        else:
            await ctx.session.send_log_message(
                "info", "before the drop", related_request_id=ctx.request_id
            )
            if ctx.close_sse_stream is not None:
                await ctx.close_sse_stream()
            await anyio.sleep(0.5)
            text = "after the drop"
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return Server("remote-test", on_list_tools=list_tools, on_call_tool=call_tool)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("log", type=Path)
    parser.add_argument("--oauth", action="store_true")
    parser.add_argument("--token-seconds", type=int, default=3600)
    args = parser.parse_args()
    log = Log(args.log)
    base = f"http://127.0.0.1:{args.port}"
    server = build(log)
    options: dict[str, Any] = {}
    if args.oauth:
        provider = Provider(log, args.token_seconds)
        options = {
            "auth": AuthSettings(
                issuer_url=base,  # type: ignore[arg-type]
                resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
                ),
                required_scopes=[SCOPE],
                validate_token_resource=False,
            ),
            "auth_server_provider": provider,
            "token_verifier": ProviderTokenVerifier(provider),
        }
    app = server.streamable_http_app(event_store=event_store(), retry_interval=200, **options)
    log(event="listening", port=args.port)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
