"""Little helpers on whole numbers."""


def square(n):
    """n times n."""
    return n * n


def is_odd(n):
    """Whether n is odd."""
    return n % 2 == 1


def is_even(n):
    """Whether n is even."""
    return n % 2 == 0
