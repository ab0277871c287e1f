"""Tomorrow's forecast for a city."""

import os
import sys


def api_key():
    """The service's key, from the environment."""
    return os.environ.get("API_KEY", "")


def describe(city, celsius):
    """The line printed for a city."""
    return f"{city}: {celsius:.0f} °C tomorrow"


if __name__ == "__main__":
    print(describe(sys.argv[1] if len(sys.argv) > 1 else "Paris", 18.4))
