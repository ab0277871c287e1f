"""Setting up from the editor: `toolgate.doctor`, `.findModelServers`, `.checkEndpoint`.

The same checks as `toolgate doctor` (toolgate.setup), with the editor's settings, key and
workspace trust: the extension's *Check Setup*, its first-run walkthrough and its chat view
show what these answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolgate.lsp.arguments import CheckEndpointArguments

if TYPE_CHECKING:
    from toolgate.lsp.state import ToolgateServer


def register(server: ToolgateServer) -> None:
    """Add the setup commands to the language server."""

    # `ls` is typed Any as in lsp/planning.py: the handlers' hints are resolved at run time.
    @server.command("toolgate.doctor")
    async def doctor(ls: Any) -> dict[str, Any]:
        """`[]` → the report `toolgate doctor --json` prints, for this editor's settings."""
        from toolgate.setup.doctor import diagnose

        report = await diagnose(
            server.workspace_root(), server.config, editor_trusted=server.editor.trusted
        )
        return report.to_dict()

    @server.command("toolgate.findModelServers")
    async def find_model_servers(ls: Any) -> list[dict[str, Any]]:
        """`[]` → the model servers answering on this machine's usual ports, with their models."""
        from toolgate.setup.local_servers import find_local_servers

        return [found.to_dict() for found in await find_local_servers()]

    @server.command("toolgate.checkEndpoint")
    async def check_endpoint(ls: Any, args: CheckEndpointArguments) -> dict[str, Any]:
        """One tiny request to the endpoint (the given one, else the configured one).

        Answers whether a run can use it and whether it calls tools natively or through the
        text protocol; with no endpoint at all, whether the embedded model is installed.
        """
        from toolgate.setup.doctor import check_model
        from toolgate.setup.endpoint_check import check_endpoint as ask

        config = server.config()
        base_url = args.base_url or config.model.base_url
        if base_url:
            model = args.model if args.base_url else config.model.name
            found = await ask(
                base_url, config.api_key, model or None, mode=config.tool_calling.mode
            )
            return found.to_dict()
        endpoint, embedded = await check_model(config, self_check=False)
        ok = endpoint.status == "ok"
        return {
            "ok": ok,
            "baseUrl": None,
            "model": None,
            "models": None,
            "toolCalling": "text" if ok else None,
            "problem": None if ok else endpoint.summary,
            "fix": endpoint.fix,
            "notes": [embedded.summary],
            "summary": endpoint.summary,
        }
