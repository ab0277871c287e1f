"""Front ends stay thin: past the session service, they may import only what the list names.

A front end (the language server, the terminal, ACP, MCP's server side) takes from the engine the
session service (`toolgate.session…`), the records and the events, and the ports it draws or
implements (`PORTS` in benchmarks/frontend_imports.py: configuration, workspace, the Reviewer
port's records and questions, the `Tool` record, the `Activity` port). Every other (front-end
module, engine module) pair is written below. A new one fails: put what the front end does with
the engine behind the service instead. A pair that is gone fails too, until it is taken off the
list, so the list only shrinks.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.frontend_imports import PORTS, pairs

SERVER = Path(__file__).resolve().parents[2] / "server"

# (front-end module, engine module) pairs that still reach past the service. Remove, never add.
PAST_THE_SERVICE: set[tuple[str, str]] = {
    ("toolgate.lsp.server", "toolgate.agent.redact"),
    ("toolgate.lsp.state", "toolgate.agent.redact"),
    ("toolgate.mcp.agent_tools", "toolgate.agent.retention"),
    ("toolgate.mcp.agent_tools", "toolgate.agent_tools"),
    ("toolgate.mcp.server", "toolgate.agent_tools"),
    ("toolgate.mcp.agent_tools", "toolgate.agent_tools.jobs"),
    ("toolgate.mcp.server", "toolgate.mcp.convert"),
    ("toolgate.acp.reviewer", "toolgate.mcp.oauth"),
    ("toolgate.mcp.server", "toolgate.mcp.sdk"),
    ("toolgate.cli.plans", "toolgate.model.llm_log"),
    ("toolgate.cli.run", "toolgate.model.llm_log"),
    ("toolgate.cli.doctor", "toolgate.setup.doctor"),
    ("toolgate.lsp.setup", "toolgate.setup.doctor"),
    ("toolgate.lsp.setup", "toolgate.setup.endpoint_check"),
    ("toolgate.lsp.setup", "toolgate.setup.local_servers"),
    ("toolgate.cli.model", "toolgate.setup.model_install"),
    ("toolgate.lsp.reviewer", "toolgate.workspace.buffers"),
}


def past_the_service(base: Path) -> set[tuple[str, str]]:
    """The pairs under `base` (a `server` folder) that are neither the way in nor a port."""
    return {pair for pair in pairs(base) if pair[1] not in PORTS}


def test_no_front_end_reaches_past_the_service_beyond_the_list() -> None:
    found = past_the_service(SERVER)
    assert sorted(found - PAST_THE_SERVICE) == [], "go through toolgate.session instead"
    assert sorted(PAST_THE_SERVICE - found) == [], "gone: take these off the list"


def test_a_new_import_past_the_service_is_seen(tmp_path: Path) -> None:
    for relative, text in {
        "toolgate/__init__.py": "",
        "toolgate/trust.py": "",
        "toolgate/config.py": "",
        "toolgate/session/__init__.py": "",
        "toolgate/lsp/__init__.py": "",
        # Lazy and type-only imports count; the service and a port do not.
        "toolgate/lsp/feature.py": (
            "from typing import TYPE_CHECKING\n"
            "from toolgate.session import SessionService\n"
            "from toolgate.config import Config\n"
            "if TYPE_CHECKING:\n"
            "    from toolgate.trust import TrustStore\n"
        ),
        "toolgate/cli/__init__.py": "",
        "toolgate/cli/thing.py": "def main() -> None:\n    import toolgate.trust\n",
    }.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    assert past_the_service(tmp_path) == {
        ("toolgate.lsp.feature", "toolgate.trust"),
        ("toolgate.cli.thing", "toolgate.trust"),
    }
