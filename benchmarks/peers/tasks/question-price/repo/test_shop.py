from shop import apply_discount, cart_total, money_label, receipt_lines


def test_total():
    assert cart_total([(2, 150), (1, 99)]) == 399


def test_discount():
    assert apply_discount(1000, 15) == 850


def test_format():
    assert money_label(1250) == "$12.50"
    assert receipt_lines([(1, 5)]) == ["1 x $0.05", "total $0.05"]
