"""The session service: the one place every front end starts, continues and ends work.

`assembly` builds a run from configuration; `service` holds what lives longer than a run
(configuration, trust, the endpoint, the conversations and who is running them).
"""

from toolgate.agent.checkpoints import CheckpointError
from toolgate.code_review.records import ReviewError, ReviewSetupError
from toolgate.config import ConfigError
from toolgate.conversation.store import SessionBusy, SessionError, SessionInfo
from toolgate.planning.service import PlanningError
from toolgate.planning.workflow import WorkflowError
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
from toolgate.session.plans import Engine
from toolgate.session.review_loop import (
    CODE_REVIEWED,
    REVIEW_LOOP_FINISHED,
    LoopOutcome,
    ReviewLoop,
)
from toolgate.session.rewind import WHATS as REWIND_WHATS
from toolgate.session.rewind import RewindDone, RewindError
from toolgate.session.service import SessionService, TrustPrompt
from toolgate.session.turns import Claim, Turn, TurnHooks
from toolgate.session.undo import UndoDone, on_disk
from toolgate.tools.manifest import ManifestError

__all__ = [
    # the errors a front end handles
    "CheckpointError",
    "ConfigError",
    "ManifestError",
    "PlanningError",
    "ReviewError",
    "ReviewSetupError",
    "RewindError",
    "SessionBusy",
    "SessionError",
    "SetupError",
    "WorkflowError",
    # the session list's records
    "SessionInfo",
    "Claim",
    "Engine",
    "ReviewLoop",
    "LoopOutcome",
    "CODE_REVIEWED",
    "REVIEW_LOOP_FINISHED",
    "SessionService",
    "TrustPrompt",
    "Turn",
    "TurnHooks",
    "UndoDone",
    "RewindDone",
    "REWIND_WHATS",
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
