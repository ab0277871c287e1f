"""The Python SDK's client side, recording what `toolgate acp` sends it."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)
from acp.stdio import spawn_agent_process


class RecordingClient:
    """Answers permission requests from a list of option ids and keeps every message."""

    def __init__(self, answers: list[str] | None = None, *, write_to_disk: bool = True) -> None:
        self.answers = list(answers or [])
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.offered: list[list[str]] = []  # the option ids of each permission request
        self.writes: list[tuple[str, str]] = []
        self.reads: list[str] = []
        self.write_to_disk = write_to_disk
        self.permission_asked = asyncio.Event()
        self.hold_permission = False  # leave the request unanswered (to cancel mid-turn)
        self.buffers: dict[str, str] = {}  # unsaved editor text by absolute path
        self.elicitations: list[tuple[str, Any]] = []  # (message, mode) of each one
        self.form_answer: dict[str, Any] | None = None  # None: take the form's defaults

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        """Answer with the next option id in the list (reject when the list is empty)."""
        self.permissions.append(tool_call)
        self.offered.append([option.option_id for option in options])
        self.permission_asked.set()
        if self.hold_permission:
            await asyncio.sleep(3600)
        answer = self.answers.pop(0) if self.answers else "reject_once"
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        """A form is answered (its defaults, or `form_answer`); a page is opened in the
        "browser", a thread that follows it as a browser would."""
        self.elicitations.append((message, mode))
        url = getattr(mode, "url", None)
        if url is not None:
            threading.Thread(
                target=lambda: urllib.request.urlopen(str(url), timeout=60).read(), daemon=True
            ).start()
            return AcceptElicitationResponse(action="accept")
        schema = mode.requested_schema.model_dump(by_alias=True, exclude_none=True)
        content = self.form_answer
        if content is None:
            properties = schema.get("properties", {})
            content = {k: v["default"] for k, v in properties.items() if "default" in v}
        return AcceptElicitationResponse(action="accept", content=content)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Keep the update."""
        self.updates.append(update)

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        """Save what the agent writes, as an editor saving its buffer would (or keep it unsaved)."""
        self.writes.append((path, content))
        if self.write_to_disk:
            Path(path).write_text(content)
            self.buffers.pop(path, None)
        else:
            self.buffers[path] = content  # the editor's buffer holds it; the disk does not
        return WriteTextFileResponse()

    async def read_text_file(
        self, path: str, session_id: str, **kwargs: Any
    ) -> ReadTextFileResponse:
        """The unsaved buffer when there is one, else the file on disk."""
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())

    def kinds(self, name: str) -> list[Any]:
        """The updates of one sessionUpdate kind."""
        return [u for u in self.updates if getattr(u, "session_update", None) == name]


def agent_env(base_url: str) -> dict[str, str]:
    """The environment an editor would start `toolgate acp` with."""
    env = dict(os.environ)
    env["OPENAI_BASE_URL"] = base_url
    env["TOOLGATE_MODEL"] = "scripted-model"
    env["OPENAI_API_KEY"] = "sk-test-secret-key"
    return env


@asynccontextmanager
async def connect(
    client: RecordingClient, base_url: str, *, fs: bool = True, elicitation: bool = False
) -> AsyncIterator[tuple[ClientSideConnection, Any]]:
    """Start `toolgate acp` over real stdio and initialize it."""
    # A loaded machine can take more than the SDK's default 2 s to let the agent exit after its
    # stdin closes; the SDK then races its terminate() against the exit.
    async with spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "toolgate",
        "acp",
        env=agent_env(base_url),
        transport_kwargs={"shutdown_timeout": 30.0},
        use_unstable_protocol=elicitation,  # ACP's elicitation is not in the stable protocol yet
    ) as (conn, process):
        caps = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
            elicitation=ElicitationCapabilities(
                form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities()
            )
            if elicitation
            else None,
        )
        await asyncio.wait_for(
            conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps), 60
        )
        yield conn, process


async def prompt(conn: Any, session_id: str, text: str) -> Any:
    """One turn: `text` as the prompt, answered within two minutes."""
    return await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[text_block(text)]), 120
    )
