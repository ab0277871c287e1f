"""An ACP editor (the official SDK's client) gets the project's commands, rules and hooks."""

from __future__ import annotations

import json
from pathlib import Path

from tests.acp.client import RecordingClient, connect, prompt
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

from toolgate.config import load_config
from toolgate.trust import TrustStore


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


async def test_acp_offers_prompt_commands_and_runs_rules_and_hooks(
    repo: Path, scripted: ScriptedModel
) -> None:
    write(
        repo / ".github/prompts/explain.prompt.md",
        "---\ndescription: Explain a file\n---\nExplain ${input:file:the README} in one line.",
    )
    write(repo / "AGENTS.md", "Marker AG-9.")
    write(repo / "calc.py", "x = 1\n")
    write(
        repo / ".claude/settings.json",
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Edit|Write",
                            "hooks": [{"type": "command", "command": "echo frozen >&2; exit 2"}],
                        }
                    ]
                }
            }
        ),
    )
    [waiting] = [t for t in load_config(repo, env={}).pending_trust if t.key.startswith("hooks.")]
    TrustStore().confirm(repo, [waiting.fingerprint])
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="x = 1", replace="x = 2"),
        {"content": "It is blocked."},
    ]
    client = RecordingClient()
    async with connect(client, scripted.base_url) as (conn, _):
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await prompt(conn, session.session_id, "/explain calc.py")
    offered = client.kinds("available_commands_update")[-1].available_commands
    explain = next(c for c in offered if c.name == "explain")
    assert explain.description == "Explain a file"
    users = [m["content"] for m in scripted.requests[0]["messages"] if m["role"] == "user"]
    assert users[-1].endswith("Explain calc.py in one line.")
    system = scripted.requests[0]["messages"][0]["content"]
    assert "Marker AG-9." in system
    result = last_tool_result(scripted.requests[1])
    assert not result["success"] and "frozen" in result["error"]
    assert (repo / "calc.py").read_text() == "x = 1\n"
    assert client.permissions == []  # blocked before anyone was asked
    thoughts = "".join(u.content.text for u in client.kinds("agent_thought_chunk"))
    assert "Following AGENTS.md." in thoughts  # the rules this turn used
