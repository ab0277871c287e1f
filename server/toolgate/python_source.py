"""Python source read into a syntax tree, one thread at a time.

CPython 3.11 keeps the syntax-tree builder's recursion counter in interpreter state that every
thread shares, and checks it after each parse. A parse that meets another thread's (a text-mode
call list read in a run's thread while another thread reads a module) can then fail with
`SystemError: AST constructor recursion depth mismatch` although both sources are valid (seen
on 3.11.7; python/cpython#106905 is a related report). Every parse in Toolgate goes through
here: the lock keeps Toolgate's own parses apart, and the retry covers a parse by a library in
the same process.
"""

from __future__ import annotations

import ast
import threading
from typing import Literal, overload

_LOCK = threading.Lock()


@overload
def parse_python(source: str, mode: Literal["exec"] = "exec") -> ast.Module: ...
@overload
def parse_python(source: str, mode: Literal["eval"]) -> ast.Expression: ...
def parse_python(
    source: str, mode: Literal["exec", "eval"] = "exec"
) -> ast.Module | ast.Expression:
    """`ast.parse`, safe to call from any thread; raises what `ast.parse` raises."""
    with _LOCK:
        try:
            tree = ast.parse(source, mode=mode)
        except SystemError:
            # a library's parse in another thread disturbed this one: once more
            tree = ast.parse(source, mode=mode)
    assert isinstance(tree, ast.Module | ast.Expression)
    return tree
