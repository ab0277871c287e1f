"""Splitting a command string into argv and checking it against an allow-list of prefixes."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence

DEFAULT_ALLOWED: tuple[tuple[str, ...], ...] = (
    ("pytest",),
    ("python", "-m", "pytest"),
    ("python3", "-m", "pytest"),
    ("py.test",),
)

# Tokens a shell would treat as operators; here they reach the program as plain arguments.
_SHELL_OPERATORS = frozenset(
    {"|", "||", "&", "&&", ";", ";;", "|&", ">", ">>", "<", "<<", "<<<", "&>", ">&", "2>", "2>>"}
    | {"2>&1", "1>&2", "(", ")", "{", "}", "!"}
)


class CommandRefused(Exception):
    """A command that will not run; the message says why, in words the model can act on."""


def split_command(command: str) -> list[str]:
    """Split a command string into argv with POSIX shell quoting, without running a shell."""
    if not isinstance(command, str):
        raise CommandRefused(f"the command must be a string, not {type(command).__name__}")
    if "\x00" in command:
        raise CommandRefused("the command contains a NUL byte")
    try:
        argv = shlex.split(command, posix=True)
    except ValueError as error:
        raise CommandRefused(
            f"the command could not be split into arguments ({error}); check its quotes"
        ) from error
    if not argv:
        raise CommandRefused("the command is empty")
    return argv


def parse_allowed(entries: Iterable[str | Sequence[str]]) -> list[tuple[str, ...]]:
    """Normalise allow-list entries, given as strings ("python -m pytest") or token sequences."""
    allowed: list[tuple[str, ...]] = []
    for entry in entries:
        if isinstance(entry, str):
            try:
                tokens = tuple(shlex.split(entry, posix=True))
            except ValueError as error:
                raise ValueError(f"allow-list entry {entry!r} cannot be split: {error}") from error
        else:
            tokens = tuple(str(token) for token in entry)
        if not tokens:
            # An empty prefix would allow every command.
            raise ValueError("an allow-list entry is empty")
        allowed.append(tokens)
    return allowed


# Options that make a program delete or write files at a path of the caller's choosing: pytest's
# `--basetemp DIR` empties DIR before the run, the others write reports or logs there. An allowed
# prefix followed by one of them is no longer covered by the allow-list: the person is asked.
_PATH_WRITING_OPTIONS = (
    "--basetemp",
    "--junitxml",
    "--junit-xml",
    "--log-file",
    "--report-log",
    "--resultlog",
    "--result-log",
    "--debug",
    "--override-ini",
)


def path_writing_option(args: Sequence[str]) -> str | None:
    """The first argument that writes or deletes files where it says (see above), if any."""
    for token in args:
        name = token.split("=", 1)[0]
        if name in _PATH_WRITING_OPTIONS:
            return token
        # `-o key=value` (pytest's --override-ini), also glued to other short flags: `-qo…`.
        if token.startswith("-") and not token.startswith("--") and "o" in name[1:]:
            return token
    return None


def is_allowed(
    argv: Sequence[str], allowed: Iterable[str | Sequence[str]] = DEFAULT_ALLOWED
) -> bool:
    """Whether argv starts with an allowed prefix and names no path-writing option after it."""
    tokens = tuple(argv)
    return any(
        len(tokens) >= len(prefix)
        and tokens[: len(prefix)] == prefix
        and path_writing_option(tokens[len(prefix) :]) is None
        for prefix in parse_allowed(allowed)
    )


def describe_allowed(allowed: Iterable[str | Sequence[str]] = DEFAULT_ALLOWED) -> str:
    """The allowed prefixes as a short human-readable list."""
    return ", ".join(f"`{shlex.join(prefix)} …`" for prefix in parse_allowed(allowed))


def looks_like_shell(argv: Sequence[str]) -> str | None:
    """A note when argv holds shell syntax, which is never interpreted here; None otherwise."""
    found: list[str] = []
    for token in argv:
        if (
            token in _SHELL_OPERATORS
            or token.endswith((";", "&&", "||"))
            or token.startswith(("$(", "`", ">", "<", "|", "2>"))
            or "$(" in token
            or "`" in token
            or token.startswith("$")
        ):
            found.append(token)
    if not found:
        return None
    shown = ", ".join(repr(token) for token in found[:5])
    return (
        f"shell syntax is not interpreted: {shown} reached the program as plain "
        "argument(s). Commands run without a shell, so pipes, redirections, chaining, "
        "substitutions and variables do not work; run one command with its arguments."
    )


def check_command(
    command: str | Sequence[str], allowed: Iterable[str | Sequence[str]] = DEFAULT_ALLOWED
) -> list[str]:
    """Split the command (when a string) and return its argv, or raise CommandRefused."""
    argv = split_command(command) if isinstance(command, str) else list(command)
    if not argv:
        raise CommandRefused("the command is empty")
    if not is_allowed(argv, allowed):
        message = (
            f"`{shlex.join(argv)}` is not on the allow-list of commands; allowed are "
            f"{describe_allowed(allowed)}"
        )
        option = path_writing_option(argv)
        if option is not None:
            message += f", without options that write or delete files where they say ({option})"
        note = looks_like_shell(argv)
        if note:
            message += f". Note: {note}"
        raise CommandRefused(message)
    return argv
