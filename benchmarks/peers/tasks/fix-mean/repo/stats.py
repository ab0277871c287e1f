"""Small statistics over lists of numbers."""


def mean(values):
    """The arithmetic mean."""
    return sum(values) / len(values)


def spread(values):
    """The distance between the largest and the smallest value."""
    return max(values) - min(values)
