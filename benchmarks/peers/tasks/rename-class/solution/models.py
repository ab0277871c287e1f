"""The people who use the shop."""


class User:
    """A person with an account."""

    def __init__(self, name, email):
        self.name = name
        self.email = email
