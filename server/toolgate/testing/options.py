"""pytest's own options that name paths: every spelling is checked to stay inside the workspace.

pytest writes where its options say: `.pytest_cache` under `--rootdir` (or the folder of `-c`'s
file, or the common folder of the paths it is given), temporary folders under `--basetemp`
(emptied first), reports and logs where `--junitxml`, `--log-file` and their kind say, and
`-o cache_dir=…`. This module reads a pytest argv the way pytest's argparse does (`--opt=value`,
`--opt value`, glued short options such as `-qcFILE`, unambiguous abbreviations of long
options) plus `PYTEST_ADDOPTS` and `PYTEST_PLUGINS`, and refuses any path outside the
workspace before anything runs.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from toolgate.runner.allowlist import CommandRefused

# Long options whose value is a path (written, deleted, or deciding where pytest writes).
_PATH_OPTIONS = frozenset(
    {
        "--rootdir",
        "--confcutdir",
        "--basetemp",
        "--junitxml",
        "--junit-xml",
        "--config-file",
        "--inifile",
        "--log-file",
        "--report-log",
        "--result-log",
        "--resultlog",
        "--debug",
        "--cov",
        "--cov-config",
        "--cov-report",
        "--html",
        "--css",
        "--json-report-file",
        "--ignore",
        "--ignore-glob",
        "--deselect",
        "--override-ini",
        "--pastebin",
    }
)

# Other long options that take a value (so the next token is that value, not a path to run).
_VALUE_OPTIONS = frozenset(
    {
        "--capture",
        "--tb",
        "--show-capture",
        "--durations",
        "--durations-min",
        "--maxfail",
        "--import-mode",
        "--junit-prefix",
        "--log-level",
        "--log-format",
        "--log-date-format",
        "--log-cli-level",
        "--log-cli-format",
        "--log-cli-date-format",
        "--log-file-level",
        "--log-file-format",
        "--log-file-date-format",
        "--log-file-mode",
        "--log-auto-indent",
        "--log-disable",
        "--doctest-glob",
        "--doctest-report",
        "--assert",
        "--color",
        "--code-highlight",
        "--verbosity",
        "--cov-fail-under",
        "--cov-context",
        "--timeout",
        "--timeout-method",
        "--numprocesses",
        "--dist",
        "--maxprocesses",
        "--tx",
        "--rsyncdir",
        "--max-worker-restart",
        "--pythonwarnings",
        "--keyword",
        "--markers-expr",
        "--randomly-seed",
    }
)

# Long options whose value may be given as the next token only when it is not an option.
_OPTIONAL_VALUE = frozenset({"--debug", "--cov", "--cov-report"})

# Short options that take a value, and which of them name a path or a plugin.
_SHORT_VALUE = frozenset("copkmWrn")
_SHORT_EXPRESSION = frozenset("kmWrn")  # expressions and counts, never paths

# ini keys (for `-o key=value`) whose value is a path pytest writes to.
_INI_PATH_KEYS = frozenset({"cache_dir", "log_file", "junit_logfile", "tmp_path"})

_ALL_LONG = _PATH_OPTIONS | _VALUE_OPTIONS


def _canonical(name: str) -> str:
    """The option an abbreviation stands for when argparse would accept it, else `name`.

    A prefix of several options counts as a path option when any of them is one, so an
    abbreviation is never read as harmless.
    """
    if name in _ALL_LONG:
        return name
    matches = sorted(option for option in _ALL_LONG if option.startswith(name))
    path_matches = [option for option in matches if option in _PATH_OPTIONS]
    if path_matches:
        return path_matches[0]
    return matches[0] if len(matches) == 1 else name


class _Checker:
    def __init__(self, root: Path, cwd: Path, source: str) -> None:
        self.root = os.path.realpath(root)
        self.cwd = os.path.realpath(cwd)
        self.source = source

    def inside(self, path: str) -> str | None:
        """The resolved path when it lies outside the workspace, else None."""
        real = os.path.realpath(os.path.join(self.cwd, path))
        try:
            if os.path.commonpath([self.root, real]) == self.root:
                return None
        except ValueError:
            pass
        return real

    def path(self, option: str, value: str) -> None:
        if not value:
            return
        outside = self.inside(value)
        if outside is not None:
            raise CommandRefused(
                f"refused: `{option}` {self.source}names {outside}, outside the workspace "
                f"({self.root}); pytest would write or read there. Paths given to pytest must "
                "stay inside the workspace: use a relative path inside it, or leave the "
                "option out."
            )

    def loose(self, option: str, value: str) -> None:
        """A value that may be a path: checked when it looks like one or names one on disk."""
        if not value:
            return
        if (
            "/" in value
            or os.sep in value
            or value in ("..", ".")
            or os.path.lexists(os.path.join(self.cwd, value))
        ):
            self.path(option, value)

    def node(self, option: str, value: str) -> None:
        """A test path or node id (`tests/test_a.py::test_x[param]`): its file part."""
        self.loose(option, value.split("::", 1)[0])

    def plugin(self, option: str, value: str) -> None:
        name = value.strip()
        if name.startswith("no:"):
            return
        if not name or "/" in name or os.sep in name or name.startswith(".") or ".py" in name:
            raise CommandRefused(
                f"refused: `{option}` {self.source}loads the plugin {value!r}, which is not a "
                "module name; pytest plugins are named by module (`-p name`), never by path"
            )

    def ini(self, option: str, value: str) -> None:
        key, _, setting = value.partition("=")
        key = key.strip()
        if key == "addopts":
            self.args(shlex.split(setting), f"{option} addopts ")
        elif key in _INI_PATH_KEYS:
            self.path(f"{option} {key}", setting.strip())
        elif key in ("pythonpath", "testpaths", "confcutdir", "norecursedirs"):
            for part in setting.split():
                self.loose(f"{option} {key}", part)
        elif key == "required_plugins":
            return
        else:
            self.loose(f"{option} {key}", setting.strip())

    def long_value(self, option: str, value: str) -> None:
        if option == "--override-ini":
            self.ini(option, value)
        elif option == "--cov-report":
            # `html`, `html:DIR`, `xml:FILE`, `term-missing:skip-covered`.
            kind, _, where = value.partition(":")
            if kind.strip() in ("term", "term-missing"):
                return
            self.path(option, where)
        elif option == "-p":
            self.plugin(option, value)
        elif option in ("--deselect", "--ignore", "--ignore-glob"):
            self.node(option, value)
        elif option in _PATH_OPTIONS:
            self.path(option, value)

    def args(self, args: Sequence[str], source: str = "") -> None:
        saved, self.source = self.source, source or self.source
        try:
            self._args(list(args))
        finally:
            self.source = saved

    def _args(self, args: list[str]) -> None:
        index = 0
        only_paths = False
        while index < len(args):
            token = args[index]
            index += 1
            if only_paths or not token.startswith("-") or token == "-":
                self.node(token, token)
                continue
            if token == "--":
                only_paths = True
                continue
            if token.startswith("--"):
                name, has_value, value = token.partition("=")
                option = _canonical(name)
                if has_value:
                    self.long_value(option, value)
                elif option in _ALL_LONG and index < len(args):
                    following = args[index]
                    if option in _OPTIONAL_VALUE and following.startswith("-"):
                        continue
                    index += 1
                    self.long_value(option, following)
                continue
            # Short options, maybe several glued: `-q`, `-qx`, `-cFILE`, `-qo cache_dir=X`.
            for position in range(1, len(token)):
                letter = token[position]
                if letter not in _SHORT_VALUE:
                    continue
                value = token[position + 1 :]
                if not value and index < len(args):
                    value = args[index]
                    index += 1
                if letter == "c":
                    self.path(f"-{letter}", value)
                elif letter == "o":
                    self.ini("-o", value)
                elif letter == "p":
                    self.plugin("-p", value)
                break


def check_pytest_paths(
    argv: Sequence[str],
    *,
    head: int,
    root: Path,
    cwd: Path,
    env: Mapping[str, str] | None = None,
) -> None:
    """Refuse (CommandRefused) pytest options or environment naming a path outside `root`.

    `head` is how many leading tokens name pytest itself (`pytest`, `python -m pytest`); the
    rest are pytest's arguments, read relative to `cwd`. `env` is the environment pytest will
    see (default: ours): `PYTEST_ADDOPTS` is read as more arguments, `PYTEST_PLUGINS` as
    plugin names.
    """
    checker = _Checker(root, cwd, "")
    checker.args(argv[head:])
    environment = os.environ if env is None else env
    addopts = environment.get("PYTEST_ADDOPTS", "")
    if addopts.strip():
        try:
            extra = shlex.split(addopts)
        except ValueError as error:
            raise CommandRefused(f"refused: PYTEST_ADDOPTS cannot be split ({error})") from None
        checker.args(extra, "(from PYTEST_ADDOPTS) ")
    for name in environment.get("PYTEST_PLUGINS", "").split(","):
        if name.strip():
            checker.plugin("PYTEST_PLUGINS", name)
