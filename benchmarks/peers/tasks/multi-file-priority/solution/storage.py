"""Saving tasks as plain dicts (the JSON file holds a list of them)."""

from models import Task


def to_dict(task):
    """The task as it is saved."""
    return {"title": task.title, "done": task.done, "priority": task.priority}


def from_dict(d):
    """A saved task read back."""
    return Task(d["title"], d.get("done", False), d.get("priority", 0))
