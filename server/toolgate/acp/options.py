"""Session config options: the profile (developer / reviewer) and the approval mode.

ACP clients show these as pickers; a change applies from the session's next turn. The
approval modes are the session service's (`toolgate.session.modes`), decided by what each tool
does: "read-only" refuses every tool that is not a read, "auto-edits" applies file changes
without asking. A command off the allow-list is asked for by its exact argv whatever is chosen.

The approval mode is also offered as the session's modes, for clients that know modes
and not config options yet (ACP's modes say how the agent asks before it changes things);
setting either changes both, and the client is told of the other.
"""

from __future__ import annotations

from acp.schema import (
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from toolgate.config import Config
from toolgate.session.modes import DEFAULT_MODE, DESCRIPTIONS

PROFILE, APPROVAL = "profile", "approval"
PROFILES = {
    "developer": "Developer: reads, changes and runs tests",
    "reviewer": "Reviewer: reads and comments",
}
APPROVALS = DESCRIPTIONS


def describe(values: dict[str, str]) -> list[SessionConfigOptionSelect]:
    """The options with their current values, as `configOptions`."""
    return [
        SessionConfigOptionSelect(
            type="select",
            id=PROFILE,
            name="Profile",
            current_value=values[PROFILE],
            options=[SessionConfigSelectOption(value=k, name=v) for k, v in PROFILES.items()],
        ),
        SessionConfigOptionSelect(
            type="select",
            id=APPROVAL,
            name="Approval",
            category="mode",
            current_value=values[APPROVAL],
            options=[SessionConfigSelectOption(value=k, name=v) for k, v in APPROVALS.items()],
        ),
    ]


def modes(values: dict[str, str]) -> SessionModeState:
    """The approval policy as the session's modes."""
    return SessionModeState(
        current_mode_id=values[APPROVAL],
        available_modes=[SessionMode(id=k, name=v) for k, v in APPROVALS.items()],
    )


def defaults(config: Config) -> dict[str, str]:
    """The values a new session starts with, from the configuration."""
    profile = config.profile if config.profile in PROFILES else "developer"
    return {PROFILE: profile, APPROVAL: DEFAULT_MODE}


def check(option: str, value: object) -> str | None:
    """Why a value cannot be set, or None."""
    choices = {PROFILE: PROFILES, APPROVAL: APPROVALS}.get(option)
    if choices is None:
        return f"unknown option {option[:80]!r}; the options are {PROFILE} and {APPROVAL}"
    if not isinstance(value, str) or value not in choices:
        return f"{option} is one of {', '.join(choices)}"
    return None


def apply(config: Config, values: dict[str, str]) -> str:
    """Put the session's profile into the turn's configuration; returns its approval mode."""
    config.profile = values[PROFILE]
    return values[APPROVAL]
