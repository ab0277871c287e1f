"""`toolgate doctor`: check that a run can start here, and say how to fix what cannot."""

from __future__ import annotations

import argparse
from typing import Any

from toolgate.cli import flags


def register(sub: Any) -> None:
    """Add `doctor` to the subcommands."""
    doctor = sub.add_parser("doctor", help="check that a run can start here, and how to fix it")
    flags.workspace(doctor)
    flags.endpoint(doctor)
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.add_argument("--no-self-check", action="store_true", help="skip the embedded model's")
    doctor.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Every check, with its fix; the exit status says whether a run can start."""
    from toolgate.setup import doctor

    return doctor.main(args, flags.overrides(args))
