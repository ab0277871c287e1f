"""The session service: the one place every front end starts, continues and ends work.

`assembly` builds a run from configuration; `service` holds what lives longer than a run
(configuration, trust, the endpoint, the conversations and who is running them).
"""

from toolgate.agent.checkpoints import CheckpointError
from toolgate.config import ConfigError
from toolgate.conversation.store import SessionBusy, SessionError, SessionInfo
from toolgate.session.assembly import (
    NO_ENDPOINT,
    SMALL_MODEL_ROLE,
    Endpoint,
    GatedCalls,
    RunSetup,
    SetupError,
    activity_settings,
    build_registry,
    check_trust,
    create_run,
    gate_for,
    gated_calls,
    pick_model,
    resolve_endpoint,
)
from toolgate.session.service import Claim, SessionService, TrustPrompt, Turn, TurnHooks
from toolgate.session.undo import UndoDone, on_disk

__all__ = [
    # the errors a front end handles
    "CheckpointError",
    "ConfigError",
    "SessionBusy",
    "SessionError",
    "SetupError",
    # the session list's records
    "SessionInfo",
    "Claim",
    "SessionService",
    "TrustPrompt",
    "Turn",
    "TurnHooks",
    "UndoDone",
    "on_disk",
    "NO_ENDPOINT",
    "SMALL_MODEL_ROLE",
    "Endpoint",
    "GatedCalls",
    "RunSetup",
    "activity_settings",
    "build_registry",
    "check_trust",
    "create_run",
    "gate_for",
    "gated_calls",
    "pick_model",
    "resolve_endpoint",
]
