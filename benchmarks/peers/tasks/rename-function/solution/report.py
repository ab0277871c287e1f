"""The lines shown to people."""

from api import load_data


def names(source):
    """The name of every record, in order."""
    return [record["name"] for record in load_data(source)]
