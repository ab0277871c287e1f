import json
from pathlib import Path

from paginate import first_page, heading


def test_the_setting_is_renamed_and_changed():
    settings = json.loads(Path(__file__).with_name("settings.json").read_text())
    assert settings["page_size"] == 25
    assert "max_items" not in settings
    assert settings["title"] == "Inventory"


def test_pages_hold_25_items():
    assert len(first_page(range(100))) == 25
    assert heading() == "Inventory"
