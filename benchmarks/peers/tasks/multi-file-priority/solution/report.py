"""The to-do list as people read it."""


def line(task):
    """One line per task: a box, ticked when done, then the title."""
    box = "[x]" if task.done else "[ ]"
    tail = f" (p{task.priority})" if task.priority else ""
    return f"{box} {task.title}{tail}"
