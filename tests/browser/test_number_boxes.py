"""A number box always shows the value the simulator uses. A committed value the control cannot take is replaced
by Python's, and the note beside the box (a live region) says why; while the student types, the box keeps the
text."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from sim.serving import kv_layout
from tests.browser.conftest import cpython_view, open_ready, wait_for_output

pytestmark = pytest.mark.lesson("kv-cache-serving")


def commit(widget, name: str, typed: str) -> None:
    box = widget.locator(f'input[type=number][name="{name}"]')
    box.fill(typed)
    box.press("Enter")


@pytest.mark.parametrize(("widget_id", "name", "typed", "used", "words"), [
    ("kv-blocks", "prefix_tokens", "100000", kv_layout.MAX_PREFIX_TOKENS, "largest"),
    ("batching-timeline", "rate", "1000", 50, "largest"),
    ("batching-timeline", "rate", "0", 0.5, "smallest"),
    ("batching-timeline", "rate", "0.7", 0.5, "nearest"),
])
def test_a_value_out_of_range_is_replaced_in_its_box_and_the_note_says_why(site_page, server, widget_id, name,
                                                                            typed, used, words):
    widget = open_ready(site_page, server.origin + "/en/kv-cache-serving/", widget_id)
    commit(widget, name, typed)
    box = widget.locator(f'input[type=number][name="{name}"]')
    expect(box).to_have_value(str(used))
    note = widget.locator(f'.control[data-param="{name}"] [data-control-note]')
    expect(note).to_have_attribute("role", "status")
    expect(note).to_contain_text(typed)
    expect(note).to_contain_text(words)
    expect(note).to_contain_text(str(used))
    state = site_page.evaluate(f"window.inferlab.views[{widget_id!r}].state")
    assert state[name] == used
    # the readouts are the simulator's for the value in the box
    for output, shown in cpython_view(widget_id, state)["outputs"].items():
        wait_for_output(widget, output, shown["value"])

def test_a_value_in_range_leaves_no_note_and_typing_keeps_the_text(site_page, server):
    widget = open_ready(site_page, server.origin + "/en/kv-cache-serving/", "kv-blocks")
    commit(widget, "prefix_tokens", "100000")
    note = widget.locator('.control[data-param="prefix_tokens"] [data-control-note]')
    expect(note).not_to_be_empty()
    box = widget.locator('input[type=number][name="prefix_tokens"]')
    box.fill("")
    box.press_sequentially("34")  # still typing: the box keeps "34" while the views of "3" and "34" arrive
    expect(note).to_be_empty()
    expect(box).to_have_value("34")
    box.press("Enter")
    expect(box).to_have_value("34")
    expect(note).to_be_empty()


def test_the_note_is_in_the_pages_language(site_page, server):
    widget = open_ready(site_page, server.origin + "/kv-cache-serving/", "kv-blocks")
    commit(widget, "prefix_tokens", "100000")
    expect(widget.locator('.control[data-param="prefix_tokens"] [data-control-note]')).to_contain_text("最大值")
