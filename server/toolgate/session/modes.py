"""The approval modes a person picks for a session: the same three in every front end.

- "ask": the settings decide, as configured (changes are reviewed, commands off the allow-list
  asked for);
- "auto-edits": file changes are applied without asking; everything else as in "ask";
- "read-only": every tool that is not a read is refused, with the reason as the call's result:
  changes, tests, commands, git, manifest tools and other MCP servers' tools not marked
  read-only.

Each is decided by what a tool does (`Tool.kind`), by the gate's policy
(`toolgate.agent.policy`). A front end offers them by these names and descriptions: ACP as its
session modes and an option, the language server as a setting and a command, `toolgate chat` as
`/mode`, `toolgate run` as `--mode`.
"""

from __future__ import annotations

from toolgate.agent.policy import ASK, AUTO_EDITS, READ_ONLY

DEFAULT_MODE = ASK
DESCRIPTIONS = {
    ASK: "Ask before every change",
    AUTO_EDITS: "Apply file changes without asking",
    READ_ONLY: "Read only: refuse every tool that is not a read (changes, tests, commands, git)",
}


def mode_problem(value: object) -> str | None:
    """Why a value is not an approval mode, or None."""
    if isinstance(value, str) and value in DESCRIPTIONS:
        return None
    return f"the approval mode is one of {', '.join(DESCRIPTIONS)}"
