"""Text helpers for page titles."""


def title_case(text):
    """Every word capitalised."""
    return " ".join(word.capitalize() for word in text.split())


def shorten(text, width):
    """At most width characters, with an ellipsis when cut."""
    return text if len(text) <= width else text[: width - 1] + "…"
