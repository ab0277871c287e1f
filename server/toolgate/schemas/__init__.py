"""The published JSON Schemas (tool manifests, plans, workflows, reviews), shipped in the package.

The repository's `schemas/` folder is the same files; this module finds them wherever the
package is installed.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

TOOL_MANIFEST = "tool-manifest.schema.json"
PLAN = "plan.schema.json"
WORKFLOW = "workflow.schema.json"
CODE_REVIEW = "code-review.schema.json"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """One published schema by file name."""
    text = resources.files(__name__).joinpath(name).read_text("utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator for one published schema; references between them resolve offline."""
    registry: Registry[Any] = Registry().with_resources(
        (load_schema(n)["$id"], Resource.from_contents(load_schema(n)))
        for n in (TOOL_MANIFEST, PLAN, WORKFLOW, CODE_REVIEW)
    )
    return Draft202012Validator(load_schema(name), registry=registry)


def first_error(name: str, doc: Any) -> tuple[str, str] | None:
    """The first violation of a schema as (field path, what was expected), or None."""
    errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        if extra:
            field = ".".join(filter(None, [where, extra[0]]))
            return field, "no such field (unknown key)"
    if error.validator == "required" and isinstance(error.validator_value, list):
        missing = [k for k in error.validator_value if k not in error.instance]
        if missing:
            return ".".join(filter(None, [where, missing[0]])), "a required field, missing"
    expected = error.schema.get("description") if error.validator == "pattern" else None
    message = error.message if expected is None else f"{error.message} ({expected})"
    return where or "(top)", message
