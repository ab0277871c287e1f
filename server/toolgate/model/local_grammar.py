"""The embedded model's answers constrained by a grammar: prose, or one well-formed tool block.

llama.cpp can restrict what a model writes to a GBNF grammar sent with each request
(`llama_cpp.server` reads a `grammar` field). The grammar built here allows prose that opens no
tag, and up to MAX_CALLS blocks of the text protocol, `<tool name="NAME" args>{JSON}</tool>`, each
naming one of the offered tools with JSON that follows that tool's parameter schema. So a small
model's calls are always well-formed, and it cannot write a `<tool_result>` of its own.

Several blocks are allowed because the small model plans a whole step-by-step task in one answer,
and after a tool result it tends to declare the task done: with one block per answer, the
explicit edit tasks of the evaluation stopped after their first call (docs/LOCAL_MODEL.md).

The JSON-schema to GBNF conversion is llama-cpp-python's own (`llama_cpp/llama_grammar.py`), read
as a plain Python file: importing the `llama_cpp` package would load the native runtime into this
process, and a runtime that crashes must only ever take its own server down.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import ModuleType
from typing import Any

from toolgate.model.local_assets import LocalModelError

# Prose may hold "<" but never "<t": a tag that starts with "t" can only be the tool block.
_PROSE = 'prose ::= ([^<] | "<" [^t])*'
# Tool blocks allowed in one answer: enough for the demo's four steps, and a bound on a model that
# would repeat a call until its token cap.
MAX_CALLS = 4


def tool_grammar(tools: Sequence[Mapping[str, Any]]) -> str:
    """A GBNF grammar: prose and up to MAX_CALLS tool blocks of `tools` (OpenAI shapes)."""
    converter = _schema_converter()
    alternatives: list[str] = []
    for tool in tools:
        function = tool.get("function", tool)
        name = str(function["name"])
        schema = copy.deepcopy(dict(function.get("parameters") or {"type": "object"}))
        # Arguments the schema does not name are refused by the gate anyway; forbid them here.
        schema.setdefault("additionalProperties", False)
        schema = converter.resolve_refs(schema, name)
        rule = converter.visit(schema, f"{name}-arguments")
        opening = json.dumps(f'<tool name="{name}" args>')
        alternatives.append(f'{opening} {rule} "</tool>"')
    grammar = converter.format_grammar()
    if not alternatives:
        return f"root ::= prose\n{_PROSE}\n{grammar}"
    call = " | ".join(alternatives)
    return f"root ::= prose (call prose){{0,{MAX_CALLS}}}\ncall ::= {call}\n{_PROSE}\n{grammar}"


def _schema_converter() -> Any:
    """A fresh SchemaConverter from the installed llama-cpp-python."""
    return _llama_grammar().SchemaConverter(
        prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
    )


@lru_cache(maxsize=1)
def _llama_grammar() -> ModuleType:
    """llama_cpp/llama_grammar.py loaded on its own (it imports only the standard library)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError("llama-cpp-python is not installed: no grammar for the local model")
    path = next(iter(spec.submodule_search_locations)) + "/llama_grammar.py"
    module_spec = importlib.util.spec_from_file_location("_toolgate_llama_grammar", path)
    if module_spec is None or module_spec.loader is None:
        raise LocalModelError(f"cannot read llama-cpp-python's grammar module at {path}")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module
