import inspect

import test_text
import text


def test_slugify():
    assert text.slugify("Hello World") == "hello-world"
    assert text.slugify("One Two Three") == "one-two-three"
    assert text.slugify("plain") == "plain"


def test_the_new_function_has_a_test():
    tests = [
        fn
        for name, fn in vars(test_text).items()
        if name.startswith("test") and callable(fn) and "slugify" in inspect.getsource(fn)
    ]
    assert tests, "test_text.py has no test that uses slugify"
