"""The latency-budget widget in a real Chromium with a real Pyodide."""

import json

import pytest
from playwright.sync_api import expect

from sim.widgets import latency_budget
from tests.browser.conftest import cpython_view, open_ready, wait_for_output

LESSON = "inference-vs-training/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
ID = "latency-budget"
# The lesson opens the widget on code completion, not on chat: chat's readouts (E2E, TPOT's share) are the answers
# to the two question boxes just above it.
LESSON_SETTINGS = {"scenario": "completion", **latency_budget.SCENARIOS["completion"].fields()}




def scenario(widget, value: str):
    return widget.locator(f'input[data-name="scenario"][value="{value}"]')


def test_page_reads_before_python_and_becomes_ready(site_page, server):
    site_page.goto(server.url(LESSON))
    widget = site_page.locator(f"#{ID}")
    expect(widget.locator('output[name="e2e_s"]')).to_have_text("470 ms")  # 150 ms + 5 ms x 64
    expect(widget.locator('output[name="tpot_share"]')).to_have_text("68.1%")
    expect(widget.locator('[data-svg="timeline"] .layout-wide svg rect')).to_have_count(2)
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)
    expect(scenario(widget, "completion")).to_be_checked()


def test_picking_a_scenario_fills_the_fields(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    scenario(widget, "agent").check()
    expect(widget.locator('input[name="ttft_ms"]')).to_have_value("800")
    expect(widget.locator('input[name="output_tokens"]')).to_have_value("800")
    expect(widget.locator('input[name="calls"]')).to_have_value("10")
    expected = cpython_view(ID, {"scenario": "agent", "changed": "scenario"})["outputs"]
    wait_for_output(widget, "chain_s", expected["chain_s"]["value"])
    expect(widget.locator('output[name="priority"]')).to_have_text(expected["priority"]["text"])
    # The link carries the filled fields too, so that it restores them without a "changed" to replay.
    site_page.wait_for_function(f"() => location.search.includes('{ID}.scenario=agent')")
    assert f"{ID}.ttft_ms=800" in site_page.url and f"{ID}.calls=10" in site_page.url


def test_editing_tpot_switches_to_custom_and_updates_e2e(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    widget.locator('input[name="tpot_ms"]').fill("50")
    expect(scenario(widget, "custom")).to_be_checked()
    wait_for_output(widget, "e2e_s", 3.35)  # 150 ms + 50 ms x 64
    expect(widget.locator('output[name="e2e_s"]')).to_have_text("3.35 s")
    expect(widget.locator('output[name="priority"]')).to_contain_text("自定义")
    # The slider followed the number box, and the timeline was redrawn from Python's SVG.
    position = latency_budget.WIDGET.control("tpot_ms").slider_position(50)  # an index into the slider's stops
    assert widget.locator(f"#{ID}-tpot_ms-slider").input_value() == str(position)
    expect(widget.locator('[data-svg="timeline"] .layout-wide svg')).to_have_attribute("aria-label", "一次请求的时间线：TTFT 150 ms，TPOT × 64 个 token = 3.2 s，共 3.35 s")


def test_link_keeps_a_scenario_with_edited_fields(site_page, server):
    widget = open_ready(site_page, server.url(f"{LESSON}?{ID}.scenario=offline&{ID}.tpot_ms=80"), ID)
    site_page.wait_for_function(f"() => window.inferlab.views[{json.dumps(ID)}] !== undefined")
    view = site_page.evaluate(f"window.inferlab.views[{json.dumps(ID)}]")
    assert view == cpython_view(ID, {**LESSON_SETTINGS, "scenario": "offline", "tpot_ms": 80})
    expect(scenario(widget, "offline")).to_be_checked()
    expect(widget.locator('input[name="tpot_ms"]')).to_have_value("80")
