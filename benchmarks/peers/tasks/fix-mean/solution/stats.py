"""Small statistics over lists of numbers."""


def mean(values):
    """The arithmetic mean."""
    if not values:
        return 0.0
    return sum(values) / len(values)


def spread(values):
    """The distance between the largest and the smallest value."""
    return max(values) - min(values)
