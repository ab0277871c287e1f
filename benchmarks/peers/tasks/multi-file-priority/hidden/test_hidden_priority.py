from models import Task
from report import line
from storage import from_dict, to_dict


def test_priority_defaults_to_zero():
    assert Task("a").priority == 0
    assert from_dict({"title": "a"}).priority == 0


def test_priority_is_saved_and_loaded():
    task = Task("a", priority=2)
    assert to_dict(task)["priority"] == 2
    assert from_dict(to_dict(task)).priority == 2
    assert from_dict(to_dict(task)) == task


def test_priority_is_shown_when_set():
    assert line(Task("a", priority=2)) == "[ ] a (p2)"
    assert line(Task("b", done=True, priority=5)) == "[x] b (p5)"
    assert line(Task("c")) == "[ ] c"
