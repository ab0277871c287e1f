import re
from pathlib import Path

import api
import report
import service

SOURCE = "name=ada role=dev\nname=bob role=ops\n"


def test_the_function_has_its_new_name():
    assert api.load_data(SOURCE) == [
        {"name": "ada", "role": "dev"},
        {"name": "bob", "role": "ops"},
    ]
    assert not hasattr(api, "fetch_data")


def test_no_file_uses_the_old_name():
    left = [
        p.name
        for p in Path(__file__).parent.glob("*.py")
        if not p.name.startswith("test_hidden")
        if re.search(r"\bfetch_data\b", p.read_text())
    ]
    assert left == []


def test_the_callers_still_work():
    assert service.count(SOURCE) == 2
    assert report.names(SOURCE) == ["ada", "bob"]
