from greet import farewell, greet


def test_greet_has_its_comma():
    assert greet("Grace") == "Hello, Grace!"


def test_farewell_is_unchanged():
    assert farewell("Grace") == "Goodbye, Grace."
