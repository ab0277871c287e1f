import pytest
import settings
from upload import check


def test_the_limit_is_25():
    assert settings.MAX_UPLOAD_MB == 25
    assert check(20)
    assert check(25)


def test_the_message_names_the_new_limit():
    with pytest.raises(ValueError, match="files over 25 MB are refused"):
        check(30)
