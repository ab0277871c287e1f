"""The terminal front end: the `toolgate` command and its subcommands (run, chat, sessions, …).

`main` is the console script's entry point; the command itself is built in `cli.command`,
imported when it runs, so that importing one of this package's modules loads no other.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script and of `python -m toolgate`."""
    from toolgate.cli.command import main as run_command

    return run_command(argv)
