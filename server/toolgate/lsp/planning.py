"""Plans in the editor: `toolgate.plan`, its `toolgate/plan` notification, and scaffolding.

`toolgate.scaffoldTool` is the action behind "Scaffold missing tool" on a gap: each gap in the
notification carries the command and arguments that scaffold it.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from toolgate.lsp.convert import path_to_uri

if TYPE_CHECKING:
    from toolgate.lsp.server import ToolgateServer

PLAN_NOTIFICATION = "toolgate/plan"


def _params(args: Any, name: str) -> dict[str, Any]:
    first = args[0] if isinstance(args, (list, tuple)) and args else None
    if first is None or first == []:
        return {}
    if not isinstance(first, dict):
        raise JsonRpcInvalidParams(f"{name} takes one object argument")
    return first


def _strings(params: dict[str, Any], key: str) -> list[str]:
    value = params.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise JsonRpcInvalidParams(f"{key} must be a list of strings")
    return value


def register(server: ToolgateServer) -> None:
    """Add the planning commands to the language server."""

    # Handlers take `ls: Any`: pygls reads their type hints at run time, and the server's class
    # is only known here for type checking; `server` is the same object, typed.
    @server.command("toolgate.plan")
    async def plan(ls: Any, *args: Any) -> dict[str, Any]:
        """`[{"task"}]` → the resolved plan with its gaps; also sent as `toolgate/plan`."""
        from toolgate.planning.service import PlanningError, make_plan
        from toolgate.tools.manifest import ManifestError

        task = _params(args, "toolgate.plan").get("task")
        if not isinstance(task, str) or not task.strip():
            raise JsonRpcInvalidParams('toolgate.plan needs [{"task": "…"}]')
        root = server.workspace_root()
        plan_id = f"p-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        try:
            made = await make_plan(root, server.config(), task, plan_id, server.log)
        except (PlanningError, ManifestError) as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        payload = {**made.to_dict(), "uri": path_to_uri(made.path)}
        for gap in payload["gaps"]:
            gap["scaffold"] = {
                "command": "toolgate.scaffoldTool",
                "arguments": [
                    {
                        "name": gap["proposed_tool_name"],
                        "capability": gap["missing_capability"],
                        "inputs": list(gap["proposed_input_schema"].get("properties", {})),
                        "outputs": list(gap["proposed_output_schema"].get("properties", {})),
                    }
                ],
            }
        server.notify(PLAN_NOTIFICATION, payload)
        return payload

    @server.command("toolgate.scaffoldTool")
    async def scaffold_tool(ls: Any, *args: Any) -> dict[str, Any]:
        """`[{"capability", "name"?, "inputs"?, "outputs"?, "language"?}]` → the files written."""
        from toolgate.tools.scaffold import ScaffoldError, scaffold
        from toolgate.tools.yaml_manifest import read_manifest
        from toolgate.trust import TrustStore

        params = _params(args, "toolgate.scaffoldTool")
        capability = params.get("capability")
        if not isinstance(capability, str):
            raise JsonRpcInvalidParams('toolgate.scaffoldTool needs [{"capability": "…"}]')
        name = params.get("name") or capability.replace(".", "_")
        language = params.get("language", "python")
        if not isinstance(name, str) or language not in ("python", "shell"):
            raise JsonRpcInvalidParams("name must be a string and language python or shell")
        root = server.workspace_root()
        try:
            files = scaffold(
                root,
                name,
                capability,
                language=language,
                inputs=_strings(params, "inputs"),
                outputs=_strings(params, "outputs"),
            )
        except ScaffoldError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        # The person asked for it just now: this exact version is trusted; an edit asks again.
        TrustStore().confirm(root, [read_manifest(files[0]).fingerprint])
        return {"name": name, "files": [path_to_uri(f) for f in files]}
