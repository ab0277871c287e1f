"""Reading records: one per line, as key=value pairs."""


def fetch_data(source):
    """The records in source, one dict per non-empty line."""
    records = []
    for line in source.splitlines():
        if line.strip():
            records.append(dict(pair.split("=", 1) for pair in line.split()))
    return records
