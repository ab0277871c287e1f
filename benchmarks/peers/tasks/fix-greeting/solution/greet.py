"""Greetings for the front desk."""


def greet(name):
    """The line shown when someone arrives."""
    return f"Hello, {name}!"


def farewell(name):
    """The line shown when someone leaves."""
    return f"Goodbye, {name}."
