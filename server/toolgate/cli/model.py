"""`toolgate model install`: the embedded local model, into this Python."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    """Add `model` and its `install` to the subcommands."""
    model = sub.add_parser("model", help="the embedded local model")
    model.add_subparsers(dest="model_command", required=True).add_parser(
        "install", help="install it into this Python, with the portable build and a self-check"
    )
    model.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Install the embedded model (its one subcommand)."""
    from toolgate.setup import model_install

    return model_install.main()
