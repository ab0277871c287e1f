"""Counting what the records hold."""

from api import load_data


def count(source):
    """How many records there are."""
    return len(load_data(source))


def count_where(source, key, value):
    """How many records have key=value."""
    return sum(1 for record in load_data(source) if record.get(key) == value)
