from paginate import first_page, heading


def test_first_page_starts_at_the_start():
    page = first_page(range(100))
    assert page
    assert page == list(range(len(page)))


def test_heading():
    assert heading() == "Inventory"
