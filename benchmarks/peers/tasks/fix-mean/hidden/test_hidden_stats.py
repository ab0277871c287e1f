from stats import mean, spread


def test_empty_mean_is_zero():
    assert mean([]) == 0.0
    assert mean(()) == 0.0


def test_mean_still_averages():
    assert mean([2, 4]) == 3.0
    assert mean((5,)) == 5.0


def test_spread_is_unchanged():
    assert spread([1, 10]) == 9
