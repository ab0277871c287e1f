from report import names
from service import count, count_where

SOURCE = "name=ada role=dev\nname=bob role=ops\n\nname=cy role=dev\n"


def test_count():
    assert count(SOURCE) == 3
    assert count_where(SOURCE, "role", "dev") == 2


def test_names():
    assert names(SOURCE) == ["ada", "bob", "cy"]
