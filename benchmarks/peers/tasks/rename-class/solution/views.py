"""How accounts are shown."""

from models import User


def card(user: User) -> str:
    """One line naming the person."""
    return f"{user.name} <{user.email}>"
