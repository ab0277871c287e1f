"""The client under test for the conformance suite's client scenarios: Toolgate, driven as a person.

The suite runs `python conformance_client.py URL` with the scenario's name in
MCP_CONFORMANCE_SCENARIO (and, for some, credentials in MCP_CONFORMANCE_CONTEXT). This puts the
URL in a fresh user configuration as `[mcp.servers.conf]`, starts the scripted model with the
call the scenario wants made (the suite's tool, through Toolgate's own `conf__…` name), and runs
`toolgate run --approve auto` on an empty workspace. The browser is a script in $BROWSER that
follows the authorization URL back to Toolgate's loopback redirect, as a browser would.
Its exit code is the run's.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SERVER = "conf"
# The client ID metadata document URL the suite's authorization servers accept.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"

# The calls each scenario wants made: the suite's tools and their arguments.
CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "tools_call": [("add_numbers", {"a": 5, "b": 3})],
    "request-metadata": [("add_numbers", {"a": 5, "b": 3})],
    "http-standard-headers": [("add_numbers", {"a": 5, "b": 3})],
    "elicitation-sep1034-client-defaults": [("test_client_elicitation_defaults", {})],
    "sse-retry": [("test_reconnection", {})],
    "sep-2322-client-request-state": [
        ("test_mrtr_echo_state", {}),
        ("test_mrtr_unrelated", {}),
        ("test_mrtr_no_state", {}),
        ("test_mrtr_no_result_type", {}),
    ],
}
_STUBS: dict[str, Any] = {"integer": 0, "number": 0, "boolean": False, "object": {}, "array": []}


def _offered(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The server's tools the model is offered, by their name on the server."""
    prefix = f"{SERVER}__"
    return {
        tool["function"]["name"][len(prefix) :]: tool["function"]
        for tool in body.get("tools", [])
        if tool["function"]["name"].startswith(prefix)
    }


def _own_schema(function: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema as its server gave it (without Toolgate's `_reasoningForCall`)."""
    schema = json.loads(json.dumps(function["parameters"]))
    schema.get("properties", {}).pop("_reasoningForCall", None)
    return schema


def _stub_arguments(function: dict[str, Any]) -> dict[str, Any]:
    """Arguments that fill a tool's required fields (what a model would make up)."""
    schema = _own_schema(function)
    properties = schema.get("properties", {})
    return {
        name: _STUBS.get(properties.get(name, {}).get("type"), "x")
        for name in schema.get("required", [])
    }


def _calls(
    scenario: str, offered: dict[str, dict[str, Any]], context: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """The calls the model makes in this scenario, among the tools it is offered."""
    if scenario == "json-schema-2020-12-preservation":
        schema = _own_schema(offered["json_schema_2020_12_tool"])
        return [("json_schema_echo", {"schema": schema})]
    if scenario == "http-custom-headers":
        return [
            (call["name"], call.get("arguments") or {})
            for call in context.get("toolCalls", [])
            if call["name"] in offered
        ]
    if scenario == "http-invalid-tool-headers":
        return [(name, _stub_arguments(function)) for name, function in offered.items()]
    if scenario in CALLS:
        return CALLS[scenario]
    if scenario.startswith("auth/") and offered:
        return [(next(iter(offered)), {})]
    return []


def _first_turn(scenario: str, context: dict[str, Any]) -> Any:
    def turn(body: dict[str, Any]) -> dict[str, Any]:
        calls = _calls(scenario, _offered(body), context)
        if not calls:
            return {"content": "Connected; nothing to call."}
        return {
            "content": "",
            "tool_calls": [
                {"name": f"{SERVER}__{name}", "arguments": arguments} for name, arguments in calls
            ],
        }

    return turn


def _config(url: str, context: dict[str, Any]) -> str:
    lines = [f"[mcp.servers.{SERVER}]", f"url = {json.dumps(url)}", 'approval = "auto"']
    oauth = {"client_metadata_url": CLIENT_METADATA_URL}
    for key in ("client_id", "client_secret"):
        if context.get(key):
            oauth[key] = str(context[key])
    lines.append(f"[mcp.servers.{SERVER}.oauth]")
    lines += [f"{key} = {json.dumps(value)}" for key, value in oauth.items()]
    return "\n".join(lines) + "\n"


def _browser(folder: Path) -> Path:
    script = folder / "browser"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, urllib.request\n"
        "urllib.request.urlopen(sys.argv[1], timeout=60).read()\n"
    )
    script.chmod(0o755)
    return script


def main() -> int:
    """Run the scenario named in the environment against the URL given last."""
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    folder = Path(tempfile.mkdtemp(prefix="toolgate-conformance-"))
    workspace = folder / "workspace"
    workspace.mkdir()
    os.environ["XDG_CONFIG_HOME"] = str(folder / "config")
    os.environ["XDG_STATE_HOME"] = str(folder / "state")
    os.environ["BROWSER"] = str(_browser(folder))
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TOOLGATE_MODEL"):
        os.environ.pop(name, None)
    config = folder / "config" / "toolgate" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(_config(url, context))

    from tests.support.scripted_model import ScriptedModel

    from toolgate.cli import main as toolgate

    with ScriptedModel(
        script=[_first_turn(scenario, context)], fallback={"content": "Done."}
    ) as model:
        return toolgate(
            [
                "run",
                "Use the conformance server's tool.",
                "--workspace", str(workspace),
                "--base-url", model.base_url,
                "--model", model.model,
                "--approve", "auto",
            ]
        )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
