"""A remote MCP server in a run of the language server: the sign-in and a question go to the editor.

The editor opens the authorization URL (`window/showDocument`, external) in its "browser" — here
a thread that follows it as a browser would — and the server's question (elicitation) comes as
`window/showMessageRequest`, offering to send the form's defaults.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.lsp.conftest import start_editor
from tests.lsp.harness import EditorClient
from tests.support.mcp_remote import events, remote_server
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.config import user_config_path

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')


async def test_sign_in_and_question_go_through_the_editor(
    repo: Path, scripted: ScriptedModel, options: dict[str, Any], tmp_path: Path
) -> None:
    log = tmp_path / "remote.jsonl"
    with remote_server(log, "--oauth") as (url, _):
        config = user_config_path()
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f'[mcp.servers.remote]\nurl = "{url}"\napproval = "auto"\n')
        scripted.script = [
            tool_call("remote__echo", text="hi"),
            tool_call("remote__ask"),
            {"content": "done"},
        ]
        editor = await start_editor(repo, options, "visual-studio-code")
        opened: list[str] = []

        def show(params: types.ShowDocumentParams) -> bool:
            opened.append(params.uri)
            if params.external:  # the person's browser, which follows the sign-in
                threading.Thread(
                    target=lambda: urllib.request.urlopen(params.uri, timeout=60).read(),
                    daemon=True,
                ).start()
            return bool(params.external)

        assert isinstance(editor.client, EditorClient)
        editor.client.on_show_document = show
        editor.answer = "Send"
        try:
            await editor.command("toolgate.ask", {"task": "Use the remote server."})
            finished = await editor.finished()
        finally:
            await editor.close()
    assert finished["status"] == "completed", finished
    assert len(opened) == 1 and "/authorize?" in opened[0]
    assert [e["event"] for e in events(log) if e["event"] in ("authorize", "token")] == [
        "authorize",
        "token",
    ]
    (question,) = [q for q in editor.questions if "asks" in q]
    assert "the MCP server 'remote' asks: Which colour?" in question
    results = [
        json.loads(m["content"])
        for m in scripted.requests[-1]["messages"]
        if m.get("role") == "tool"
    ]
    assert [r["data"]["text"] for r in results] == [
        "echo: hi",
        'accept: {"colour": "blue", "sure": true}',
    ]
