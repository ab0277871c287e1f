from text import shorten, title_case


def test_title_case():
    assert title_case("hello world") == "Hello World"


def test_shorten():
    assert shorten("abcdef", 4) == "abc…"
    assert shorten("abc", 4) == "abc"
