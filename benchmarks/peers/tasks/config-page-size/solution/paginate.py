"""Cutting long lists into pages."""

import json
from pathlib import Path

SETTINGS = Path(__file__).with_name("settings.json")


def settings():
    """The settings file, read afresh."""
    return json.loads(SETTINGS.read_text())


def first_page(items):
    """The items shown on the first page."""
    return list(items)[: settings()["page_size"]]


def heading():
    """The page's heading."""
    return settings()["title"]
