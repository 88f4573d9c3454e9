"""sim/kit/table.py: every body cell of a widget's table names its column, and wide tables stack on a phone."""

import xml.etree.ElementTree as ET

import pytest

from sim import widgets
from sim.kit.table import STACK_COLUMNS, html_table, table_class


def test_each_body_cell_carries_its_column_heading_as_plain_text():
    markup = html_table("Caption & more", ["B", "Per request (tok/s)", "<Fits>"], [
        (' class="current"', [("th", ' scope="row"', "1"), ("td", ' class="number"', "64.6"), ("td", "", "yes")]),
        ("", [("th", ' scope="row"', "<span>2</span>"), ("td", "", "3"), ("td", "", "no")]),
    ])
    table = ET.fromstring(markup)
    assert table.get("class") == "widget-table"  # three columns fit a phone: no stacking
    assert [th.text for th in table.iter("th") if th.get("scope") == "col"] == ["B", "Per request (tok/s)", "<Fits>"]
    rows = table.find("tbody").findall("tr")
    assert [[cell.get("data-label") for cell in row] for row in rows] == [["B", "Per request (tok/s)", "<Fits>"]] * 2
    assert rows[0].get("class") == "current" and rows[1][0].find("span").text == "2"


def test_a_table_stacks_from_four_columns():
    assert STACK_COLUMNS == 4
    assert table_class(3) == "widget-table" and table_class(4) == "widget-table table-stack"


def test_a_cell_short_of_its_row_is_an_error():
    with pytest.raises(ValueError):
        html_table("c", ["a", "b"], [("", [("td", "", "1")])])


@pytest.mark.parametrize("name, key", [("batch-throughput", "table"), ("kv-blocks", "table")])
def test_the_widgets_wide_tables_stack_and_label_every_cell(name, key):
    for lang in ("zh", "en"):
        table = ET.fromstring(widgets.render(name, {"lang": lang})["svg"][key])
        assert "table-stack" in table.get("class").split()
        headings = [th.text for th in table.find("thead").iter("th")]
        for row in table.find("tbody").findall("tr"):
            assert [cell.get("data-label") for cell in row] == headings
