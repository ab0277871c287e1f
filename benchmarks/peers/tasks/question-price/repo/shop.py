"""The shop's arithmetic: carts, discounts and receipts."""


def cart_total(items):
    """The sum of quantity times unit price (in cents) over the cart."""
    return sum(quantity * cents for quantity, cents in items)


def apply_discount(cents, percent):
    """The price after a discount, rounded down to a whole cent."""
    return cents * (100 - percent) // 100


def money_label(cents):
    """The price as the customer reads it."""
    return f"${cents // 100}.{cents % 100:02d}"


def receipt_lines(items):
    """One line per item, then the total."""
    lines = [f"{quantity} x {money_label(cents)}" for quantity, cents in items]
    lines.append(f"total {money_label(cart_total(items))}")
    return lines
