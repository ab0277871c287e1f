"""Arguments: JSON decoding, typing values against a tool's schema, Python literals, names.

Every syntax reads its arguments through these, so the same text gives the same arguments and
the same error wording whichever syntax carried it.
"""

from __future__ import annotations

import ast
import html
import json
from collections.abc import Mapping
from typing import Any

EXPECTED = '<tool name="NAME" args>{"argument": "value"}</tool>'


class BadCall(Exception):
    """A call-shaped construct that cannot become a call; the message goes to the model."""


def unknown_tool(name: str, tools: Mapping[str, Any]) -> str:
    """The error for a name that is not a registered tool."""
    return f"unknown tool '{name}'; available: {', '.join(sorted(tools)) or '(none)'}"


def is_json(text: str) -> bool:
    """Whether `text` is valid JSON as it stands."""
    try:
        json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return False
    return True


def load_json(text: str, where: str, expected: str = EXPECTED) -> Any:
    """JSON, accepting raw control characters in strings and HTML-escaped quotes."""
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, json.JSONDecodeError) and exc.msg == "Extra data":
            # Small models often close one brace too many: `{"path": "a.py"}}`. A person
            # reads that as the object before it; anything else after it stays an error.
            rest = text[exc.pos :].strip()
            if rest and set(rest) <= set("}]"):
                try:
                    return json.JSONDecoder(strict=False).raw_decode(text.strip())[0]
                except (ValueError, RecursionError):
                    pass
        if "&quot;" in text or "&#34;" in text:
            try:
                return json.loads(html.unescape(text), strict=False)
            except (ValueError, RecursionError):
                pass
        detail = (
            f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            if isinstance(exc, json.JSONDecodeError)
            else exc.__class__.__name__
        )
        raise BadCall(
            f"broken JSON in the arguments of '{where}': {detail}; expected {expected} "
            "with valid JSON"
        ) from None


def name_and_arguments(obj: Any, where: str) -> tuple[str, Any]:
    """Read a {"name": …, "arguments"|"parameters"|"args": …} object."""
    if isinstance(obj, dict) and isinstance(obj.get("function"), dict) and "name" not in obj:
        obj = obj["function"]
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        raise BadCall(
            f'{where} must hold {{"name": "TOOL", "arguments": {{…}}}}; expected {EXPECTED}'
        )
    args = obj.get("arguments", obj.get("parameters", obj.get("args", {})))
    return obj["name"], args


def looks_like_calls(items: list[Any], tools: Mapping[str, Any], every: bool = False) -> bool:
    """Ambiguous syntaxes count as calls only for registered names with an arguments object."""
    good = [
        isinstance(i, dict)
        and i.get("name") in tools
        and set(i) <= {"name", "arguments", "parameters", "args", "id", "type"}
        and isinstance(i.get("arguments", i.get("parameters", i.get("args", {}))), (dict, str))
        for i in items
    ]
    return bool(good) and (all(good) if every else good[0])


def strip_fence(text: str) -> str:
    """The body of a code fence that wraps the whole text, or the text itself."""
    if text.startswith("```"):
        nl = text.find("\n")
        text = text[nl + 1 :] if nl >= 0 else ""
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
        return text.strip()
    return text


def strip_one_newline(value: str) -> str:
    """Strip exactly one leading and one trailing newline (CRLF counts as one)."""
    if value.startswith("\r\n"):
        value = value[2:]
    elif value.startswith("\n"):
        value = value[1:]
    if value.endswith("\r\n"):
        value = value[:-2]
    elif value.endswith("\n"):
        value = value[:-1]
    return value


def tool_properties(tools: Mapping[str, Any], name: str | None) -> Mapping[str, Any]:
    """The argument schemas of tool `name`, by argument (empty for an unknown tool)."""
    schema = tools.get(name or "")
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return props if isinstance(props, Mapping) else {}


def schema_types(schema: Any) -> list[str]:
    """The JSON types a value of `schema` may take, in the schema's order (empty: any).

    Read from `type`, else from the values of `enum` and `const`, else from the branches of
    `anyOf`, `oneOf` and `allOf` (a tool's `["string", "null"]` is often written as one of
    these).
    """
    if not isinstance(schema, Mapping):
        return []
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    values = schema["enum"] if isinstance(schema.get("enum"), list) else []
    if "const" in schema:
        values = [schema["const"]]
    found: list[str] = [_json_type(v) for v in values]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        for branch in branches if isinstance(branches, list) else []:
            found.extend(schema_types(branch))
    return list(dict.fromkeys(found))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "string"


def typed_value(value: str, schema: Any) -> Any:
    """Type an XML parameter value by its JSON Schema; strings stay verbatim.

    Where the schema allows a string beside other types, the others are tried first and the
    text is what is left (`7` for `["string", "integer"]` is 7, `auto` is "auto"), as the
    inference servers' readers of these forms do; a value the schema's `enum` does not hold
    is not taken.
    """
    types = schema_types(schema)
    s = value.strip()
    for t in types:
        if t == "string":
            continue
        got = _as_type(s, t, "string" in types)
        if got is not _NOT_THIS and _allowed(got, schema):
            return got
    return value


_NOT_THIS = object()


def _as_type(s: str, t: str, may_be_text: bool) -> Any:
    """`s` read as JSON type `t`, or `_NOT_THIS`."""
    if t in ("integer", "number"):
        # a number written as a JSON string, escaped or not, as GLM-4.7 sometimes writes it
        for quote in ('\\"', '"'):
            if len(s) > 2 * len(quote) and s.startswith(quote) and s.endswith(quote):
                s = s[len(quote) : -len(quote)]
                break
    try:
        if t == "integer":
            return int(s)
        if t == "number":
            f = float(s)
            return int(f) if f.is_integer() and "." not in s and "e" not in s.lower() else f
        if t == "boolean" and s.lower() in ("true", "false"):
            return s.lower() == "true"
        # An empty value is null only where it cannot be the empty text.
        if t == "null" and (s.lower() in ("null", "none") or not s and not may_be_text):
            return None
        if t in ("array", "object"):
            try:
                got = json.loads(s)
            except ValueError:
                got = _escaped_json(s)
                if got is None:
                    got = ast.literal_eval(s)
            if isinstance(got, list if t == "array" else dict):
                return got
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    return _NOT_THIS


def _allowed(value: Any, schema: Any) -> bool:
    """Whether the schema's `enum` (if it has one) holds `value`."""
    enum = schema.get("enum") if isinstance(schema, Mapping) else None
    return not isinstance(enum, list) or any(
        value == e and isinstance(value, bool) == isinstance(e, bool) for e in enum
    )


def _escaped_json(text: str) -> Any:
    r"""JSON written escaped once more, as inside a string (`[{\"id\": 1}]`); else None."""
    if '\\"' not in text:
        return None
    try:
        return json.loads(json.loads(f'"{text}"'))
    except (ValueError, TypeError, RecursionError):
        return None


_PY_NAMES = {"true": True, "false": False, "null": None, "none": None}


def python_literal(node: ast.expr, name: str, arg: str) -> Any:
    """The value of a pythonic call's argument, read with `ast` and never evaluated."""
    if isinstance(node, ast.Name) and node.id.lower() in _PY_NAMES:
        return _PY_NAMES[node.id.lower()]
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise BadCall(
            f"argument '{arg}' of pythonic call '{name}' is not a literal value"
        ) from None
    if isinstance(value, (set, frozenset, bytes, complex)):
        raise BadCall(f"argument '{arg}' of pythonic call '{name}' is not JSON-like")
    return _jsonable(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value
