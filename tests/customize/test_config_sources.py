"""Hooks and MCP servers from other agents' files join the configuration under the trust rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolgate.config import ConfigError, apply_trust, load_config

HOOK = {
    "PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "exit 2"}]}]
}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def test_a_workspace_hook_waits_for_the_person(tmp_path: Path) -> None:
    write(tmp_path / ".claude/settings.json", json.dumps({"hooks": HOOK}))
    config = load_config(tmp_path, env={})
    assert config.hooks == []
    [waiting] = [t for t in config.pending_trust if t.key.startswith("hooks.")]
    assert waiting.describe().endswith("runs a command on PreToolUse for Edit|Write: exit 2")
    apply_trust(config, {waiting.fingerprint})
    [hook] = config.hooks
    assert (hook.event, hook.matcher, hook.command) == ("PreToolUse", "Edit|Write", "exit 2")
    # The confirmation is for this exact command: another text waits again.
    write(
        tmp_path / ".claude/settings.json",
        json.dumps({"hooks": {"Stop": [{"hooks": [{"command": "exit 0"}]}]}}),
    )
    again = load_config(tmp_path, env={})
    apply_trust(again, {waiting.fingerprint})
    assert again.hooks == [] and len(again.pending_trust) == 1


def test_the_persons_own_toml_hooks_run(tmp_path: Path) -> None:
    config_home = Path(__import__("os").environ["XDG_CONFIG_HOME"])
    write(
        config_home / "toolgate/config.toml",
        '[[hooks.PostToolUse]]\nmatcher = "write_file"\n'
        'hooks = [{ type = "command", command = "ruff format .", timeout = 30 }]\n',
    )
    config = load_config(tmp_path, env={})
    assert [(h.event, h.command, h.timeout) for h in config.hooks] == [
        ("PostToolUse", "ruff format .", 30.0)
    ]


def test_a_wrong_hooks_table_is_a_configuration_error(tmp_path: Path) -> None:
    write(tmp_path / ".toolgate/config.toml", "[hooks]\nBefore = []\n")
    with pytest.raises(ConfigError, match="hooks.Before"):
        load_config(tmp_path, env={})


def test_mcp_json_servers_wait_and_the_persons_run(tmp_path: Path) -> None:
    config_home = Path(__import__("os").environ["XDG_CONFIG_HOME"])
    write(
        config_home / "toolgate/mcp.json", json.dumps({"mcpServers": {"mine": {"command": "srv"}}})
    )
    write(
        tmp_path / ".mcp.json",
        json.dumps({"mcpServers": {"docs": {"command": "docs-srv", "args": ["-q"]}}}),
    )
    write(
        tmp_path / ".vscode/mcp.json",
        json.dumps(
            {
                "servers": {
                    "remote": {"type": "http", "url": "https://x.example/mcp"},
                    "asks": {"command": "a", "env": {"K": "${input:k}"}},
                }
            }
        ),
    )
    config = load_config(tmp_path, env={})
    assert config.mcp.servers == {"mine": {"command": ["srv"]}}
    assert config.mcp.sources["mine"].endswith("toolgate/mcp.json")
    waiting = {t.key: t for t in config.pending_trust}
    assert waiting["mcp.servers.docs"].value == {"command": ["docs-srv", "-q"]}
    assert waiting["mcp.servers.docs"].source == str(tmp_path / ".mcp.json")
    assert waiting["mcp.servers.remote"].value == {"url": "https://x.example/mcp", "type": "http"}
    assert any("'asks' is not used" in note and "input 'k'" in note for note in config.notes)
    apply_trust(config, {waiting["mcp.servers.docs"].fingerprint})
    assert config.mcp.servers["docs"] == {"command": ["docs-srv", "-q"]}
    assert config.mcp.sources["docs"] == str(tmp_path / ".mcp.json")


def test_a_broken_mcp_json_is_a_note_not_a_failure(tmp_path: Path) -> None:
    write(tmp_path / ".mcp.json", "{broken")
    config = load_config(tmp_path, env={})
    assert config.mcp.servers == {}
    assert len(config.notes) == 1 and "not valid JSON" in config.notes[0]
