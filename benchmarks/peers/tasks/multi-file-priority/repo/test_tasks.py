from models import Task
from report import line
from storage import from_dict, to_dict


def test_round_trip():
    task = Task("write docs", done=True)
    assert from_dict(to_dict(task)) == task


def test_line():
    assert line(Task("write docs")) == "[ ] write docs"
    assert line(Task("ship", done=True)) == "[x] ship"
