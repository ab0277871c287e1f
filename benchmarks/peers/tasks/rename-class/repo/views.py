"""How accounts are shown."""

from models import Usr


def card(user: Usr) -> str:
    """One line naming the person."""
    return f"{user.name} <{user.email}>"
