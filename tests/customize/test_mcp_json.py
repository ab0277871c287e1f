"""MCP servers from .mcp.json and .vscode/mcp.json, in Toolgate's own table shape."""

from __future__ import annotations

import json
from pathlib import Path

from toolgate.customize.mcp_json import read_mcp_file


def test_claude_shape_with_environment(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "docs": {
                        "command": "npx",
                        "args": ["-y", "docs-server", "${ROOT:-/srv}"],
                        "env": {"TOKEN": "${TOKEN}"},
                    },
                    "remote": {
                        "type": "http",
                        "url": "https://mcp.example/mcp",
                        "headers": {"Authorization": "Bearer ${KEY}"},
                    },
                    "bad name": {"command": "x"},
                    "broken": {"args": []},
                }
            }
        )
    )
    found = read_mcp_file(path, tmp_path, env={"TOKEN": "t0k", "KEY": "k"})
    assert found.servers == {
        "docs": {"command": ["npx", "-y", "docs-server", "/srv"], "env": {"TOKEN": "t0k"}},
        "remote": {
            "url": "https://mcp.example/mcp",
            "type": "http",
            "headers": {"Authorization": "Bearer ${env:KEY}"},
        },
    }
    assert set(found.skipped) == {"bad name", "broken"}
    assert "command" in found.skipped["broken"]


def test_vscode_shape_with_inputs_and_folders(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "inputs": [{"id": "api-key", "type": "promptString", "password": True}],
                "servers": {
                    "files": {
                        "type": "stdio",
                        "command": "srv",
                        "args": ["${workspaceFolder}"],
                        "env": {"HOME_DIR": "${env:HOME}"},
                    },
                    "needs": {
                        "type": "sse",
                        "url": "https://x/sse",
                        "headers": {"K": "${input:api-key}"},
                    },
                },
            }
        )
    )
    found = read_mcp_file(path, tmp_path, env={"HOME": "/home/p"})
    assert found.servers == {
        "files": {"command": ["srv", str(tmp_path)], "env": {"HOME_DIR": "/home/p"}}
    }
    assert "api-key" in found.skipped["needs"]


def test_a_broken_file_says_why(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text("{")
    assert "not valid JSON" in (read_mcp_file(path, tmp_path).problem or "")
    path.write_text("[]")
    assert "mcpServers" in (read_mcp_file(path, tmp_path).problem or "")
