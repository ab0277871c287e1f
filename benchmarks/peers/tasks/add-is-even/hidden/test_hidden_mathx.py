import inspect

import mathx
import test_mathx


def test_is_even():
    assert mathx.is_even(4) is True
    assert mathx.is_even(0) is True
    assert mathx.is_even(-2) is True
    assert mathx.is_even(7) is False


def test_the_new_function_has_a_test():
    tests = [
        fn
        for name, fn in vars(test_mathx).items()
        if name.startswith("test") and callable(fn) and "is_even" in inspect.getsource(fn)
    ]
    assert tests, "test_mathx.py has no test that uses is_even"
