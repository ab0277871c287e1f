"""Running commands safely: no shell, an allow-list, a killable process group, capped output."""

from toolgate.runner.allowlist import (
    DEFAULT_ALLOWED,
    CommandRefused,
    check_command,
    is_allowed,
    looks_like_shell,
    parse_allowed,
    split_command,
)
from toolgate.runner.output import cap_output
from toolgate.runner.process import ProcessOutcome, resolve_executable, run_process

__all__ = [
    "DEFAULT_ALLOWED",
    "CommandRefused",
    "ProcessOutcome",
    "cap_output",
    "check_command",
    "is_allowed",
    "looks_like_shell",
    "parse_allowed",
    "resolve_executable",
    "run_process",
    "split_command",
]
