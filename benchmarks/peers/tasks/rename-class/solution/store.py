"""Where accounts are kept."""

from models import User


class Store:
    """Accounts by email address."""

    def __init__(self):
        self.by_email = {}

    def add(self, name, email):
        """Create an account and keep it."""
        user = User(name, email)
        self.by_email[email] = user
        return user
