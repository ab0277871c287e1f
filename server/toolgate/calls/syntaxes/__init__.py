"""The registry of delimited syntaxes: the built-in families, and those added from outside.

The built-in syntaxes whose end depends on their content are registered in `content_ended.py`.
A syntax from outside, of either kind, is a `Syntax` subclass named either by an entry point in
the group `toolgate.syntaxes` of an installed package, or in the config's
`tool_calling.syntax_modules` by a module path (every `Syntax` subclass the module defines) or
`module:Class` (that one).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Sequence
from functools import cache
from importlib.metadata import entry_points

from toolgate.calls.syntaxes.base import Failed, Found, Prose, Reading, Syntax, Tools
from toolgate.calls.syntaxes.command_r import CommandR
from toolgate.calls.syntaxes.deepseek import DeepSeek
from toolgate.calls.syntaxes.function_gemma import FunctionGemma
from toolgate.calls.syntaxes.functionary import Functionary
from toolgate.calls.syntaxes.gemma4 import Gemma4
from toolgate.calls.syntaxes.glm import Glm
from toolgate.calls.syntaxes.granite import Granite
from toolgate.calls.syntaxes.harmony import Harmony
from toolgate.calls.syntaxes.internlm import InternLM
from toolgate.calls.syntaxes.jamba import Jamba
from toolgate.calls.syntaxes.kimi_k2 import KimiK2
from toolgate.calls.syntaxes.lfm2 import Lfm2
from toolgate.calls.syntaxes.llama4 import Llama4
from toolgate.calls.syntaxes.olmo3 import Olmo3
from toolgate.calls.syntaxes.spaced_tag import SpacedTag

ENTRY_POINT_GROUP = "toolgate.syntaxes"

BUILTIN: tuple[type[Syntax], ...] = (
    KimiK2,
    DeepSeek,
    Harmony,
    Glm,
    Functionary,
    Lfm2,
    Llama4,
    Granite,
    Jamba,
    InternLM,
    CommandR,
    Olmo3,
    FunctionGemma,
    Gemma4,
    SpacedTag,
)

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "Failed",
    "Found",
    "Prose",
    "Reading",
    "Syntax",
    "Tools",
    "configured",
    "load_syntax",
    "load_syntaxes",
    "registered",
]


def load_syntax(spec: str) -> type[Syntax]:
    """Import `module:Class` and check that it is a `Syntax`; a clear error otherwise."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"syntax {spec!r}: write it as module:Class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"syntax {spec!r}: cannot import {module_name}: {exc}") from None
    cls = getattr(module, attr, None)
    if not isinstance(cls, type) or not issubclass(cls, Syntax):
        raise ValueError(f"syntax {spec!r}: {attr} is not a Syntax subclass")
    _check(cls, spec)
    return cls


def load_syntaxes(spec: str) -> tuple[type[Syntax], ...]:
    """`module:Class` is that syntax; a bare module path, every `Syntax` subclass it defines."""
    if ":" in spec:
        return (load_syntax(spec),)
    try:
        module = importlib.import_module(spec)
    except ImportError as exc:
        raise ValueError(f"syntax module {spec!r}: cannot import it: {exc}") from None
    found = tuple(
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Syntax)
        and value.__module__ == module.__name__
    )
    if not found:
        raise ValueError(f"syntax module {spec!r}: it defines no Syntax subclass")
    for cls in found:
        _check(cls, f"{spec}:{cls.__name__}")
    return found


def _check(cls: type[Syntax], where: str) -> None:
    for lit in (*cls.opens, *cls.closes):
        if not lit:
            raise ValueError(f"syntax {where}: an empty opening or closing literal")
    for lit in cls.opens:
        if not lit.startswith("<"):
            raise ValueError(f"syntax {where}: the opening {lit!r} must start with '<'")
    if not getattr(cls, "name", ""):
        raise ValueError(f"syntax {where}: no name")


@cache
def _from_entry_points() -> tuple[type[Syntax], ...]:
    found: list[type[Syntax]] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found.append(load_syntax(ep.value))
        except ValueError as exc:
            # One broken plug-in must not stop the parser; say why it is left out.
            print(f"toolgate: entry point {ep.name!r} left out: {exc}", file=sys.stderr)
    return tuple(found)


@cache
def _from_config(spec: str) -> tuple[type[Syntax], ...]:
    try:
        return load_syntaxes(spec)
    except ValueError as exc:
        # Like a broken entry point: the parser reads the other syntaxes, and says why once.
        print(f"toolgate: tool_calling.syntax_modules: left out: {exc}", file=sys.stderr)
        return ()


def configured(modules: Sequence[str]) -> list[Syntax]:
    """The syntaxes a run reads: `registered()`, and those of the config's `syntax_modules`."""
    classes = (*BUILTIN, *_from_entry_points(), *(c for m in modules for c in _from_config(m)))
    return _by_name(classes)


def registered(modules: Sequence[str] = ()) -> list[Syntax]:
    """The built-in syntaxes, then those of entry points, then `modules` (`module:Class`)."""
    classes: Iterable[type[Syntax]] = (
        *BUILTIN,
        *_from_entry_points(),
        *(load_syntax(spec) for spec in modules),
    )
    return _by_name(classes)


def _by_name(classes: Iterable[type[Syntax]]) -> list[Syntax]:
    seen: dict[str, Syntax] = {}
    for cls in classes:
        seen[cls.name] = cls()  # a later one of the same name replaces an earlier one
    return list(seen.values())
