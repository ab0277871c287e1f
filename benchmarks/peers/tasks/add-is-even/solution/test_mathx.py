from mathx import is_even, is_odd, square


def test_square():
    assert square(3) == 9


def test_is_odd():
    assert is_odd(3)
    assert not is_odd(4)


def test_is_even():
    assert is_even(4) is True
    assert is_even(3) is False
