"""A disk cache for the methods attrs generates, so the server starts faster.

Importing `lsprotocol.types` (which every pygls server needs) creates about 550 attrs classes,
and attrs writes and compiles the source of each one's `__init__`, `__repr__` and `__eq__`:
compiling is about a third of the server's start-up. The generated source is the same on every
start, so its compiled code objects are kept in a marshal file, like Python keeps `.pyc` files,
keyed by the exact source text and file name. Anything unexpected (another attrs layout, a
damaged or foreign cache file, no place to keep it) means compiling as usual: the code that runs
is always what attrs would have compiled from the same source.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType
from typing import Any

_FORMAT = 1
_STRAYS = 8


def cache_file(*sources: str) -> Path:
    """One file per Python and per installed copy of the given source files.

    Code objects are bound to the Python version, and the generated source to the attrs and
    lsprotocol releases; their files' paths, sizes and times tell the copies apart, which is
    cheaper at start-up than reading package metadata.
    """
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    ident = [sys.implementation.cache_tag or "python", str(_FORMAT)]
    for path in sources:
        try:
            st = os.stat(path)
            ident.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            ident.append(path)
    digest = hashlib.blake2b("\0".join(ident).encode(), digest_size=8).hexdigest()
    return Path(base) / "toolgate" / "code" / f"attrs-{digest}.marshal"


def _key(source: str, filename: str) -> bytes:
    return hashlib.blake2b(f"{filename}\0{source}".encode(), digest_size=16).digest()


def _load(path: Path) -> dict[bytes, CodeType]:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, bytes) and isinstance(v, CodeType)}


def _save(path: Path, codes: dict[bytes, CodeType]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(marshal.dumps(codes))
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        pass  # a read-only or full cache directory only costs the next start its speed


@contextlib.contextmanager
def attrs_code_cache(path: Path | None = None) -> Iterator[dict[str, int]]:
    """While active, attrs reuses compiled code from `path`; new code is saved on exit.

    Yields counters (`hits`, `misses`) for tests and diagnostics.
    """
    stats = {"hits": 0, "misses": 0}
    try:
        import attr._make as attrs_make
    except ImportError:
        yield stats
        return
    # attrs compiles its generated methods with the builtin `compile`, looked up as a
    # global of attr._make; where that is not so, there is nothing to speed up.
    if not hasattr(attrs_make, "_compile_and_eval") or "compile" in vars(attrs_make):
        yield stats
        return
    if path is None:
        try:
            spec = importlib.util.find_spec("lsprotocol.types")
            path = cache_file(attrs_make.__file__ or "", (spec and spec.origin) or "")
        except (ImportError, ValueError, RuntimeError, KeyError):
            # no lsprotocol to find, or no home directory to keep a cache in: start as usual
            yield stats
            return
    target = path
    codes = _load(target)
    new: dict[bytes, CodeType] = {}
    builtin_compile: Callable[..., Any] = compile

    def cached_compile(source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
        if not (isinstance(source, str) and isinstance(filename, str)) or args or kwargs:
            return builtin_compile(source, filename, mode, *args, **kwargs)
        key = _key(source, filename)
        code = codes.get(key)
        if code is not None and code.co_filename == filename:
            stats["hits"] += 1
            return code
        code = builtin_compile(source, filename, mode)
        new[key] = code
        stats["misses"] += 1
        return code

    # A module global that shadows the builtin for attrs' generated code alone; the module
    # declares no such name, hence the ignore.
    attrs_make.compile = cached_compile  # type: ignore[attr-defined]
    try:
        yield stats
    finally:
        with contextlib.suppress(AttributeError):
            del attrs_make.compile  # type: ignore[attr-defined]  # the global set above
        # A few scripts differ on every start (a frozen class's __hash__ carries the process's
        # hash salt): they are compiled each time rather than rewriting the file every start.
        if len(new) > (0 if not codes else _STRAYS):
            _save(target, {**_load(target), **codes, **new})  # another server may have saved
