"""The lines shown to people."""

from api import fetch_data


def names(source):
    """The name of every record, in order."""
    return [record["name"] for record in fetch_data(source)]
