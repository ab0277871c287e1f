import pytest
from upload import check


def test_small_files_pass():
    assert check(5)


def test_huge_files_are_refused():
    with pytest.raises(ValueError):
        check(500)


def test_other_kinds_are_refused():
    with pytest.raises(ValueError):
        check(1, "exe")
