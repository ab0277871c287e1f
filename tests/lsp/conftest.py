"""Start the real `toolgate lsp` over stdio with a pytest-lsp client."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from tests.lsp.harness import Editor, make_client, uri_of
from tests.support.scripted_model import ScriptedModel

SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "toolgate", "lsp"], client_factory=make_client
)
# Logs everything, pygls' dumps of whole messages included.
VERBOSE_SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "toolgate", "-v", "lsp"], client_factory=make_client
)
API_KEY = "sk-test-SECRET-never-shown-0123456789"


async def start_editor(
    root: Path,
    options: dict[str, Any],
    capabilities: str,
    *,
    apply_edit: bool = True,
    verbose: bool = False,
    relative_patterns: bool | None = None,
) -> Editor:
    config = VERBOSE_SERVER if verbose else SERVER
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    editor = Editor(client, root)
    editor.install()
    caps = client_capabilities(capabilities)
    if not apply_edit and caps.workspace is not None:
        caps.workspace.apply_edit = False
    watched = caps.workspace.did_change_watched_files if caps.workspace else None
    if relative_patterns is not None and watched is not None:
        watched.relative_pattern_support = relative_patterns  # else as the profile says
    await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            workspace_folders=[types.WorkspaceFolder(uri=uri_of(root), name="project")],
            initialization_options=options,
        )
    )
    return editor


@pytest.fixture
def options(scripted: ScriptedModel) -> dict[str, Any]:
    return {
        "baseUrl": scripted.base_url,
        "model": scripted.model,
        "apiKey": API_KEY,
        "toolCalling": {"mode": "native"},
    }


@pytest_asyncio.fixture
async def editor(repo: Path, options: dict[str, Any]) -> AsyncIterator[Editor]:
    ed = await start_editor(repo, options, "visual-studio-code")
    yield ed
    await ed.close()
