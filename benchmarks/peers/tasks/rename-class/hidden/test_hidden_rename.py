import re
from pathlib import Path

import models
import store
import views


def test_the_class_has_its_new_name():
    user = models.User("Grace", "grace@example.com")
    assert user.name == "Grace"
    assert not hasattr(models, "Usr")


def test_no_file_uses_the_old_name():
    left = [
        p.name
        for p in Path(__file__).parent.glob("*.py")
        if not p.name.startswith("test_hidden")
        if re.search(r"\bUsr\b", p.read_text())
    ]
    assert left == []


def test_the_callers_still_work():
    user = store.Store().add("Grace", "grace@example.com")
    assert isinstance(user, models.User)
    assert views.card(user) == "Grace <grace@example.com>"
