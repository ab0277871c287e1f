from store import Store
from views import card


def test_add_and_show():
    store = Store()
    user = store.add("Ada", "ada@example.com")
    assert store.by_email["ada@example.com"] is user
    assert card(user) == "Ada <ada@example.com>"
