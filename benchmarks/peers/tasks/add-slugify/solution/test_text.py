from text import shorten, slugify, title_case


def test_title_case():
    assert title_case("hello world") == "Hello World"


def test_shorten():
    assert shorten("abcdef", 4) == "abc…"
    assert shorten("abc", 4) == "abc"


def test_slugify():
    assert slugify("Hello World") == "hello-world"
