"""What a to-do list holds."""

from dataclasses import dataclass


@dataclass
class Task:
    """One thing to do."""

    title: str
    done: bool = False
