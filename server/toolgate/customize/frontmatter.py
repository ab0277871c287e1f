"""YAML front matter: the `---` block that opens a Markdown file, read with a YAML parser."""

from __future__ import annotations

from typing import Any

import yaml


class FrontMatterError(ValueError):
    """Front matter that is not a YAML mapping; the message says what is wrong."""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter as a mapping and the body after it; no front matter gives `{}`."""
    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):
        return {}, text
    first_break = text.find("\n")
    if first_break == -1 or text[3:first_break].strip():
        return {}, text
    end = text.find("\n---", first_break)
    if end == -1:
        raise FrontMatterError("front matter opened with '---' is never closed")
    block = text[first_break + 1 : end]
    after = text.find("\n", end + 4)
    body = "" if after == -1 else text[after + 1 :]
    try:
        meta = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML: {_first_line(exc)}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise FrontMatterError("front matter is not a mapping of fields")
    return {str(key): value for key, value in meta.items()}, body


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def words(value: Any) -> list[str]:
    """A field that names several things: a YAML list, or one string split at commas/spaces."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(item).strip() for item in value if str(item).strip()]
    text = str(value).replace(",", " ")
    return [part.strip().strip("'\"") for part in text.split() if part.strip().strip("'\"")]


def globs(value: Any) -> list[str]:
    """Glob patterns, as a YAML list or a comma-separated string (spaces inside kept)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(item).strip() for item in value if str(item).strip()]
    return [part.strip().strip("'\"") for part in str(value).split(",") if part.strip()]
