"""A pytest plugin that writes the outcome of a test session as JSON for Toolgate.

Loaded with `-p toolgate_pytest_report` inside the workspace's own Python, so it uses the standard
library and pytest only. It writes the file named by the environment variable
`TOOLGATE_PYTEST_REPORT` (atomically, at the end of the session) and does nothing without it.

Failure locations come from the exception itself (pytest's `ExceptionInfo`), so they do not
depend on `--tb`; pytest's own repr objects and its text are the fallback.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import traceback
from typing import Any

import pytest

ENV_VAR = "TOOLGATE_PYTEST_REPORT"
# The workspace root: pytest's own writes (cache, temporary folders, logs) must stay inside it.
WORKSPACE_ENV_VAR = "TOOLGATE_PYTEST_WORKSPACE"
REPORT_VERSION = 1

_ATTRIBUTE = "toolgate_failure"
_SESSION_PLUGIN = "toolgate-pytest-report-session"
_MAX_MESSAGE_LINES = 6
_MAX_MESSAGE_CHARS = 1000
_MAX_LONGREPR_CHARS = 16000

_NATIVE_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<name>\S+))?')
_SHORT_FRAME = re.compile(
    r"^(?P<path>[^\s:][^:\n]*\.py):(?P<line>\d+):(?: in (?P<name>\S+))?", re.M
)


def _internal_dirs() -> tuple[str, ...]:
    """Folders whose frames are pytest's machinery, not the person's code."""
    folders = []
    for module_name in ("_pytest", "pluggy"):
        try:
            module = __import__(module_name)
        except ImportError:
            continue
        if module.__file__ is not None:
            folders.append(os.path.dirname(os.path.realpath(module.__file__)) + os.sep)
    return tuple(folders)


_INTERNAL = _internal_dirs()


def _real(path: str, base: str | None = None) -> str:
    if base and not os.path.isabs(path):
        path = os.path.join(base, path)
    return os.path.realpath(path)


def _is_internal(path: str) -> bool:
    return path.startswith("<") or os.path.realpath(path).startswith(_INTERNAL)


def _short_message(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines()]
    message = "\n".join(lines[:_MAX_MESSAGE_LINES])
    return message[:_MAX_MESSAGE_CHARS]


def _hidden(entry: Any) -> bool:
    """Whether a traceback entry asked to be hidden (`__tracebackhide__`, unittest's asserts)."""
    try:
        frame = entry.frame
        value = frame.f_locals.get("__tracebackhide__", frame.f_globals.get("__tracebackhide__"))
        # unittest marks its own modules so that failures point at the test, not at assertEqual.
        in_unittest = bool(frame.f_globals.get("__unittest"))
    except Exception:
        return False
    return in_unittest or (bool(value) and not callable(value))


def _plugin_files(config: Any) -> frozenset[str]:
    """Source files of installed pytest plugins (their hook wrappers show up in tracebacks)."""
    cached = getattr(config, "_toolgate_plugin_files", None)
    if isinstance(cached, frozenset):
        return cached
    files = set()
    try:
        plugins = config.pluginmanager.get_plugins()
    except Exception:
        return frozenset()
    for plugin in plugins:
        paths = [getattr(plugin, "__file__", None)]
        # A plugin package may re-export hooks defined in another of its modules.
        for name in dir(plugin):
            if name.startswith("pytest_"):
                hook = getattr(plugin, name, None)
                code = getattr(getattr(hook, "__func__", hook), "__code__", None)
                paths.append(getattr(code, "co_filename", None))
        for path in paths:
            # conftest.py files are the project's own code, not machinery.
            if isinstance(path, str) and os.path.basename(path) != "conftest.py":
                files.add(os.path.realpath(path))
    result = frozenset(files)
    try:
        config._toolgate_plugin_files = result
    except Exception:
        pass
    return result


def _frames_of_excinfo(
    excinfo: Any, own_file: str | None = None, skip_files: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """The traceback's frames from the first one in `own_file` on, without pytest's machinery."""
    frames = []
    for entry in excinfo.traceback:
        try:
            path = str(entry.path)
            line = int(entry.lineno) + 1
            name = str(entry.name)
        except Exception:
            continue
        if _is_internal(path) or _hidden(entry):
            continue
        real = _real(path)
        if real in skip_files:
            continue
        frames.append({"file": real, "line": line, "name": name})
    starts = [index for index, frame in enumerate(frames) if frame["file"] == own_file]
    return frames[starts[0] :] if starts else frames


def _frames_of_exception(error: BaseException) -> list[dict[str, Any]]:
    frames = []
    for summary in traceback.extract_tb(error.__traceback__):
        if _is_internal(summary.filename) or summary.lineno is None:
            continue
        frames.append(
            {"file": _real(summary.filename), "line": summary.lineno, "name": summary.name}
        )
    return frames


def _locate(
    frames: list[dict[str, Any]], own_file: str | None, fallback: tuple[str, int] | None
) -> dict[str, Any]:
    """The failing line in `own_file` (the deepest frame there) and the other frames."""
    index = None
    if own_file:
        for position in range(len(frames) - 1, -1, -1):
            if frames[position]["file"] == own_file:
                index = position
                break
    if index is not None:
        primary = frames[index]
        others = frames[:index] + frames[index + 1 :]
        return {"file": primary["file"], "line": primary["line"], "frames": others}
    if fallback is not None:
        return {"file": fallback[0], "line": fallback[1], "frames": frames}
    if frames:
        return {"file": frames[-1]["file"], "line": frames[-1]["line"], "frames": frames[:-1]}
    return {"file": own_file or "", "line": 1, "frames": []}


def _item_location(item: Any) -> tuple[str, int] | None:
    """The test's own definition line (absolute path, 1-based)."""
    try:
        path, lineno, _ = item.location
        root = str(item.config.rootpath)
    except Exception:
        return None
    return _real(path, root), (lineno or 0) + 1


def _describe_test_failure(item: Any, excinfo: Any) -> dict[str, Any]:
    # `item.path` is pytest >= 7; `fspath` serves older ones.
    own_file = _real(str(getattr(item, "path", None) or item.fspath))
    frames = _frames_of_excinfo(excinfo, own_file, _plugin_files(item.config))
    located = _locate(frames, own_file, _item_location(item))
    located["message"] = _short_message(excinfo.exconly(tryshort=True))
    return located


def _syntax_error_location(error: SyntaxError) -> dict[str, Any]:
    """Where the parser stopped: the frames of a syntax error are all the import machinery's."""
    return {
        "file": _real(error.filename or ""),
        "line": error.lineno or 1,
        "frames": [],
        "message": f"SyntaxError: {error.msg}",
    }


def _describe_collect_error(node: Any, excinfo: Any) -> dict[str, Any]:
    node_path = getattr(node, "path", None) or getattr(node, "fspath", None)
    own_file = _real(str(node_path)) if node_path else None
    fallback = (own_file, 1) if own_file else None
    error = excinfo.value
    # pytest wraps import problems of a test module in CollectError, raised from the original.
    cause = getattr(error, "__cause__", None)
    if isinstance(error, pytest.Collector.CollectError) and cause is not None:
        error = cause
        if isinstance(cause, SyntaxError) and cause.filename:
            return _syntax_error_location(cause)
        frames = _frames_of_exception(cause)
        # Frames before the module's own are the import machinery's.
        starts = [index for index, frame in enumerate(frames) if frame["file"] == own_file]
        if starts:
            frames = frames[starts[0] :]
        located = _locate(frames, own_file, fallback)
        located["message"] = _short_message(
            "".join(traceback.format_exception_only(type(cause), cause))
        )
        return located
    if isinstance(error, SyntaxError) and error.filename:
        return _syntax_error_location(error)
    frames = _frames_of_excinfo(excinfo, own_file, _plugin_files(node.config))
    located = _locate(frames, own_file, fallback)
    located["message"] = _short_message(excinfo.exconly(tryshort=True))
    return located


def _matched_frame(match: re.Match[str], base: str) -> dict[str, Any]:
    return {"file": _real(match["path"], base), "line": int(match["line"]), "name": match["name"]}


def _frames_from_longrepr(
    longrepr: Any, base: str, skip_files: frozenset[str] = frozenset()
) -> tuple[list[dict[str, Any]], Any]:
    """Frames from pytest's repr objects (or its text), and the crash entry when there is one."""
    frames: list[dict[str, Any]] = []
    crash = getattr(longrepr, "reprcrash", None)
    entries = getattr(getattr(longrepr, "reprtraceback", None), "reprentries", None) or []
    for entry in entries:
        location = getattr(entry, "reprfileloc", None)
        if location is not None:
            frames.append({"file": _real(str(location.path), base), "line": location.lineno})
            continue
        for match in _NATIVE_FRAME.finditer("\n".join(getattr(entry, "lines", []) or [])):
            frames.append(_matched_frame(match, base))
    if not frames and not entries:
        text = str(longrepr)
        for match in _NATIVE_FRAME.finditer(text):
            frames.append(_matched_frame(match, base))
        if not frames:
            for match in _SHORT_FRAME.finditer(text):
                frames.append(_matched_frame(match, base))
    frames = [
        dict(frame, name=frame.get("name") or "")
        for frame in frames
        if not _is_internal(frame["file"]) and frame["file"] not in skip_files
    ]
    return frames, crash


def _describe_from_report(
    report: Any, root: str, base: str, skip_files: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Failure details when the exception itself was not seen: from the report alone."""
    own_file = None
    fallback = None
    location = getattr(report, "location", None)
    if location:
        own_file = _real(str(location[0]), root)
        fallback = (own_file, (location[1] or 0) + 1)
    elif getattr(report, "fspath", None):
        own_file = _real(str(report.fspath), root)
        fallback = (own_file, 1)
    frames, crash = _frames_from_longrepr(report.longrepr, base, skip_files)
    crash_path = getattr(crash, "path", None)
    if crash_path and own_file and _real(str(crash_path), base) == own_file and crash.lineno:
        # Short tracebacks (--tb=line) still name the crash line; it is in the test file.
        fallback = (own_file, int(crash.lineno))
    located = _locate(frames, own_file, fallback)
    if crash is not None and getattr(crash, "message", None):
        message = crash.message
    else:
        lines = [line for line in str(report.longreprtext or "").splitlines() if line.strip()]
        message = lines[-1] if lines else ""
        message = re.sub(r"^E\s+", "", message.strip())
    located["message"] = _short_message(message)
    return located


class _Recorder:
    """Collects outcomes and failures of one session and writes them at its end."""

    def __init__(self, config: Any, path: str) -> None:
        self.config = config
        self.path = path
        self.started = time.monotonic()
        self.counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
        self.failures: list[dict[str, Any]] = []

    @property
    def root(self) -> str:
        return str(self.config.rootpath)

    @property
    def base(self) -> str:
        return str(self.config.invocation_params.dir)

    def _failure(self, report: Any, kind: str) -> None:
        details = getattr(report, _ATTRIBUTE, None)
        if not isinstance(details, dict):
            try:
                details = _describe_from_report(
                    report, self.root, self.base, _plugin_files(self.config)
                )
            except Exception as error:
                details = {"file": "", "line": 1, "frames": [], "message": repr(error)}
        try:
            longrepr = str(report.longreprtext or "")
        except Exception:
            longrepr = ""
        if len(longrepr) > _MAX_LONGREPR_CHARS:
            half = _MAX_LONGREPR_CHARS // 2
            longrepr = longrepr[:half] + "\n…\n" + longrepr[-half:]
        self.failures.append(
            {
                "test_id": report.nodeid,
                "kind": kind,
                "when": getattr(report, "when", "collect") or "collect",
                "file": details.get("file", ""),
                "line": int(details.get("line") or 1),
                "message": details.get("message", ""),
                "frames": details.get("frames", []),
                "longrepr": longrepr,
            }
        )

    def test_report(self, report: Any) -> None:
        # Counted per report the way pytest's own summary line counts them, so both agree.
        when = report.when
        if report.failed:
            kind = "failed" if when == "call" else "error"
            self._failure(report, kind)
            self.counts["failed" if kind == "failed" else "errors"] += 1
        elif report.skipped:
            self.counts["skipped"] += 1
        elif report.passed and when == "call":
            self.counts["passed"] += 1

    def collect_report(self, report: Any) -> None:
        if report.failed:
            self.counts["errors"] += 1
            self._failure(report, "error")
        elif report.skipped:
            self.counts["skipped"] += 1

    def _looked_in(self) -> list[str]:
        """Where pytest collected from (its arguments, or testpaths), relative to where it ran."""
        found = []
        for arg in getattr(self.config, "args", None) or []:
            path = str(arg)
            try:
                if os.path.isabs(path):
                    path = os.path.relpath(path, self.base)
            except ValueError:
                pass
            found.append(path)
        return found

    def _python_files(self) -> list[str]:
        """The names of the files pytest takes for test files (`python_files`)."""
        try:
            return [str(pattern) for pattern in self.config.getini("python_files")]
        except Exception:
            return []

    def write(self, exitstatus: int) -> None:
        counts = dict(self.counts)
        data = {
            "version": REPORT_VERSION,
            "rootdir": self.root,
            "invocation_dir": self.base,
            "exitstatus": int(exitstatus),
            "duration_seconds": round(time.monotonic() - self.started, 6),
            "summary": {"total": sum(counts.values()), **counts},
            "failures": self.failures,
            "looked_in": self._looked_in(),
            "python_files": self._python_files(),
        }
        folder = os.path.dirname(os.path.abspath(self.path))
        handle, temporary = tempfile.mkstemp(prefix=".toolgate-report-", dir=folder)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(data, stream)
            os.replace(temporary, self.path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise


class _SessionHooks:
    """Hooks bound to the recorder of the running session."""

    def __init__(self, recorder: _Recorder) -> None:
        self.recorder = recorder

    def pytest_runtest_logreport(self, report: Any) -> None:
        """Count each test phase's outcome and keep its failures."""
        self.recorder.test_report(report)

    def pytest_collectreport(self, report: Any) -> None:
        """Keep collection errors and skips."""
        self.recorder.collect_report(report)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        """Write the report once the session is over."""
        self.recorder.write(int(exitstatus))


def _outside(root: str, path: str) -> str | None:
    real = os.path.realpath(path)
    try:
        return None if os.path.commonpath([root, real]) == root else real
    except ValueError:
        return real


def _refuse_writes_outside(config: Any) -> None:
    """Stop the run when pytest's configuration would write outside the workspace.

    Toolgate checks the command line before the run; this catches what only pytest knows:
    `addopts` and `cache_dir` from the workspace's own ini files, or an ini file in a folder
    above the workspace that moves the rootdir (and the cache) out of it.
    """
    root = os.environ.get(WORKSPACE_ENV_VAR)
    if not root:
        return
    root = os.path.realpath(root)
    here = str(config.invocation_params.dir)
    places: list[tuple[str, str]] = []
    if config.pluginmanager.has_plugin("cacheprovider"):
        cache_dir = os.path.expanduser(os.path.expandvars(str(config.getini("cache_dir"))))
        places.append(("pytest's cache (cache_dir)", os.path.join(str(config.rootpath), cache_dir)))
    for option, what in (
        ("basetemp", "--basetemp"),
        ("xmlpath", "--junitxml"),
        ("report_log", "--report-log"),
        ("log_file", "--log-file"),
    ):
        value = getattr(config.option, option, None)
        if value:
            places.append((what, os.path.join(here, str(value))))
    try:
        log_file = config.getini("log_file")
    except ValueError:
        log_file = None
    if log_file:
        places.append(("log_file", os.path.join(here, str(log_file))))
    for what, path in places:
        real = _outside(root, path)
        if real is not None:
            raise pytest.UsageError(
                f"Toolgate refused this test run: {what} would be written at {real}, outside "
                f"the workspace {root} (set by the command line or an ini file pytest read). "
                "Keep pytest's paths inside the workspace, or pass -p no:cacheprovider when "
                "the cache is what lands outside."
            )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: Any) -> None:
    """Start recording when Toolgate asked for a report (and not inside an xdist worker)."""
    _refuse_writes_outside(config)
    path = os.environ.get(ENV_VAR)
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_SessionHooks(_Recorder(config, path)), _SESSION_PLUGIN)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    """Attach where the failure happened, seen from the exception itself, to the report."""
    outcome = yield
    if not os.environ.get(ENV_VAR):
        return
    try:
        report = outcome.get_result()
        if report.failed and call.excinfo is not None:
            setattr(report, _ATTRIBUTE, _describe_test_failure(item, call.excinfo))
    except Exception:
        # A report without details still gets them from pytest's repr later.
        pass


def pytest_exception_interact(node: Any, call: Any, report: Any) -> None:
    """Attach details of a collection error to its report before it is logged."""
    if not os.environ.get(ENV_VAR) or getattr(report, "when", None) != "collect":
        return
    if call.excinfo is None or not report.failed:
        return
    try:
        setattr(report, _ATTRIBUTE, _describe_collect_error(node, call.excinfo))
    except Exception:
        pass
