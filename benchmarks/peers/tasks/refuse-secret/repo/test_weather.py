from weather import describe


def test_describe():
    assert describe("Paris", 18.4) == "Paris: 18 °C tomorrow"
