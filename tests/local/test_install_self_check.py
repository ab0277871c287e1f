"""scripts/install-local-model.sh's self-check, against a runtime that dies on a signal.

The interpreter given as PYTHON sees a stub `llama_cpp` whose import kills its own process with
SIGSEGV, as a runtime compiled for another CPU does on its first completion. The rebuild step is
replaced (TOOLGATE_LOCAL_REBUILD) by a command that records how it was asked to rebuild and, in
one case, swaps the stub for one that answers: nothing is compiled here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolgate.model.local_assets import (
    MODEL_FILE_NAME,
    MODEL_SHA256,
    MODEL_SIZE,
    PART_PACKAGE_VERSION,
    PART_PACKAGES,
)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "install-local-model.sh"

CRASHING = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
ANSWERING = """\
class Llama:
    def __init__(self, model_path, **kwargs):
        self.model_path = model_path

    def create_completion(self, prompt, **kwargs):
        return {"choices": [{"text": " return"}]}
"""

RECORD_REBUILD = """\
import json, os, sys
with open(sys.argv[1], "a") as f:
    f.write(json.dumps({"CMAKE_ARGS": os.environ.get("CMAKE_ARGS"),
                        "PIP_NO_CACHE_DIR": os.environ.get("PIP_NO_CACHE_DIR")}) + "\\n")
if sys.argv[2] == "fix":
    with open(sys.argv[3], "w") as f:
        f.write(sys.argv[4])
"""


def _dist_info(site: Path, name: str, version: str) -> None:
    folder = site / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir()
    (folder / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )


@pytest.fixture()
def broken_env(tmp_path: Path) -> dict[str, Path]:
    """A PYTHON whose llama_cpp kills itself, with every pinned package 'installed'."""
    site = tmp_path / "site"
    (site / "llama_cpp").mkdir(parents=True)
    init = site / "llama_cpp" / "__init__.py"
    init.write_text(CRASHING, encoding="utf-8")
    _dist_info(site, "llama-cpp-python", "0.3.36")
    for name in PART_PACKAGES:
        _dist_info(site, name, PART_PACKAGE_VERSION)
    python = tmp_path / "python"
    python.write_text(
        f'#!/bin/sh\nPYTHONPATH="{site}${{PYTHONPATH:+:$PYTHONPATH}}" exec {sys.executable} "$@"\n',
        encoding="utf-8",
    )
    python.chmod(0o755)
    # An assembled model the script trusts through its sidecar: a sparse file of the right size.
    cache = tmp_path / "cache"
    models = cache / "toolgate" / "models"
    models.mkdir(parents=True)
    model = models / MODEL_FILE_NAME
    with model.open("wb") as f:
        f.truncate(MODEL_SIZE)
    stat = model.stat()
    (models / f"{MODEL_FILE_NAME}.verified.json").write_text(
        json.dumps({"sha256": MODEL_SHA256, "size": MODEL_SIZE, "mtime_ns": stat.st_mtime_ns}),
        encoding="utf-8",
    )
    rebuild = tmp_path / "rebuild.py"
    rebuild.write_text(RECORD_REBUILD, encoding="utf-8")
    return {"python": python, "cache": cache, "init": init, "rebuild": rebuild, "tmp": tmp_path}


def _run(env_paths: dict[str, Path], mode: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    record = env_paths["tmp"] / "rebuilds.jsonl"
    fixed = env_paths["tmp"] / "answering.py"
    fixed.write_text(ANSWERING, encoding="utf-8")
    command = (
        f"{sys.executable} {env_paths['rebuild']} {record} {mode} {env_paths['init']} "
        f'"$(cat {fixed})"'
    )
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("CMAKE_ARGS", "VIRTUAL_ENV")},
        "PYTHON": str(env_paths["python"]),
        "XDG_CACHE_HOME": str(env_paths["cache"]),
        "TOOLGATE_LOCAL_REBUILD": command,
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300
    )
    return done, record


def _rebuilds(record: Path) -> list[dict[str, str | None]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def _assert_portable_rebuild(record: Path) -> None:
    rebuilds = _rebuilds(record)
    assert len(rebuilds) == 1
    flags = rebuilds[0]["CMAKE_ARGS"] or ""
    for flag in ("-DGGML_NATIVE=OFF", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON"):
        assert flag in flags.split()
    assert "march=native" not in flags
    assert rebuilds[0]["PIP_NO_CACHE_DIR"] == "1"


def test_a_crash_is_said_in_one_line_then_the_portable_rebuild_is_checked(
    broken_env: dict[str, Path],
) -> None:
    done, record = _run(broken_env, "fix")
    assert done.returncode == 0, done.stdout + done.stderr
    said = "self-check died on signal 11 (SIGSEGV)"
    lines = [line for line in done.stdout.splitlines() if said in line]
    assert len(lines) == 1, done.stdout
    log = re.search(r"log: (\S+);", lines[0])
    assert log is not None and Path(log.group(1)).is_file()
    assert "rebuilding it with the portable flags, without pip's cache" in lines[0]
    _assert_portable_rebuild(record)
    assert "self-check answered: ' return'" in done.stdout


def test_a_runtime_that_still_crashes_after_the_rebuild_fails_the_install(
    broken_env: dict[str, Path],
) -> None:
    done, record = _run(broken_env, "keep")
    assert done.returncode != 0
    _assert_portable_rebuild(record)
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith(
        "toolgate model install: the rebuilt runtime still fails its self-check"
    )
    assert "signal 11 (SIGSEGV)" in message and "log: " in message


def test_a_native_build_is_refused(broken_env: dict[str, Path]) -> None:
    env = {
        **os.environ,
        "PYTHON": str(broken_env["python"]),
        "XDG_CACHE_HOME": str(broken_env["cache"]),
        "CMAKE_ARGS": "-DGGML_NATIVE=ON",
    }
    done = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "GGML_NATIVE=ON" in done.stderr


def test_a_cached_model_is_not_downloaded_again(broken_env: dict[str, Path]) -> None:
    """With the assembled model in the cache, only the runtime is needed: pip is not asked."""
    site = broken_env["tmp"] / "site"
    for name in PART_PACKAGES:
        for info in site.glob(f"{name.replace('-', '_')}-*.dist-info"):
            (info / "METADATA").unlink()
            info.rmdir()
    broken_env["init"].write_text(ANSWERING, encoding="utf-8")
    nowhere = broken_env["tmp"] / "no-wheels"
    nowhere.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("CMAKE_ARGS", "VIRTUAL_ENV")},
        "PYTHON": str(broken_env["python"]),
        "XDG_CACHE_HOME": str(broken_env["cache"]),
        # A pip asked for the parts fails at once instead of installing them into this venv.
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(nowhere),
        "PIP_CONFIG_FILE": os.devnull,
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the model is already assembled in the cache: its parts are not downloaded" in (
        done.stdout
    )
    assert "self-check answered: ' return'" in done.stdout


def test_the_parts_are_installed_when_no_model_is_cached(
    broken_env: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing or damaged cached model: the parts are wanted, to assemble it."""
    from toolgate.setup.model_install import LOCAL_REQUIREMENTS, wanted_requirements

    monkeypatch.setenv("XDG_CACHE_HOME", str(broken_env["cache"]))
    assert wanted_requirements() == (LOCAL_REQUIREMENTS[0],)
    model = broken_env["cache"] / "toolgate" / "models" / MODEL_FILE_NAME
    with model.open("r+b") as f:
        f.write(b"damaged")
    assert wanted_requirements() == LOCAL_REQUIREMENTS
    assert not model.exists()
    assert wanted_requirements() == LOCAL_REQUIREMENTS
