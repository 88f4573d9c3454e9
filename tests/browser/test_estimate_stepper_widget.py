"""The estimate-stepper widget in a real Chromium with a real Pyodide: one panel per step, GPU comparisons."""

import json

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import cpython_view, open_ready

LESSON = "prefill-decode/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
WIDGET = "estimate-stepper"
STEPS = ("naive", "fails", "improved")



def step_button(widget, step: str):
    return widget.locator(f'label:has(input[data-name="step"][value="{step}"])')


def expect_only_panel(widget, shown: str) -> None:
    for step in STEPS:
        panel = widget.locator(f'[data-flag="step_{step}"]')
        if step == shown:
            expect(panel).to_be_visible()
        else:
            expect(panel).to_be_hidden()


def expect_output(widget, name: str, state: dict) -> None:
    expected = cpython_view(WIDGET, state)["outputs"][name]
    out = widget.locator(f'output[name="{name}"]')
    expect(out).to_have_text(expected["text"])
    assert float(out.get_attribute("data-value")) == expected["value"], name  # as numbers: JS and Python differ


def test_lesson_state_is_pre_rendered(site_page, server):
    site_page.goto(server.url(LESSON))
    widget = site_page.locator(f"#{WIDGET}")
    state = json.loads(widget.locator("script.widget-data").text_content())["state"]
    expect_only_panel(widget, state["step"])
    for name in ("naive_tokens_per_s", "bytes_ms", "naive_vs_h100"):
        expect_output(widget, name, state)
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)


def test_steps_show_their_panel_and_hide_the_others(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), WIDGET)
    expect(widget.locator('output[name="naive_tokens_per_s"]')).to_have_text("19,308 tok/s")
    step_button(widget, "fails").click()
    expect_only_panel(widget, "fails")
    expect(widget.locator('output[name="overestimate"]')).to_have_text("约 295×")
    expect(widget.locator('output[name="utilisation"]')).to_have_text("0.34%")
    step_button(widget, "improved").click()
    expect_only_panel(widget, "improved")
    expect(widget.locator('output[name="bytes_ms"]')).to_have_text("15.30 ms")
    step_button(widget, "naive").click()
    expect_only_panel(widget, "naive")


def test_switching_to_a100_and_h200_shows_the_ratio_text(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), WIDGET)
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    expect(widget.locator('output[name="naive_vs_h100"]')).to_have_text("约 0.32×（约三分之一）")
    expect_output(widget, "naive_tokens_per_s", {"hardware": "a100-sxm-80gb"})
    step_button(widget, "fails").click()
    expect_output(widget, "fails_note", {"hardware": "a100-sxm-80gb", "step": "fails"})
    step_button(widget, "improved").click()
    expect_only_panel(widget, "improved")
    expect(widget.locator('output[name="bytes_vs_h100"]')).to_have_text("约 0.61×（约五分之三）")
    widget.locator('select[name="hardware"]').select_option("h200-sxm")
    expect(widget.locator('output[name="bytes_vs_h100"]')).to_have_text("约 1.43×")
    expect_output(widget, "bytes_ms", {"hardware": "h200-sxm"})
    expect_only_panel(widget, "improved")


def test_link_restores_a_step_and_equals_cpython(site_page, server):
    state = {"step": "improved", "hardware": "a100-sxm-80gb", "model": "qwen3-32b"}
    query = "&".join(f"{WIDGET}.{k}={v}" for k, v in state.items())
    widget = open_ready(site_page, server.url(f"{LESSON}?{query}"), WIDGET)
    site_page.wait_for_function(f"() => window.inferlab.views[{json.dumps(WIDGET)}] !== undefined")
    assert site_page.evaluate(f"window.inferlab.views[{json.dumps(WIDGET)}]") == cpython_view(WIDGET, state)
    expect_only_panel(widget, "improved")
    expect_output(widget, "bytes_vs_h100", state)


def test_capacity_flag_is_on_the_page_and_off_for_the_presets(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), WIDGET)
    flag = widget.locator('[data-flag="capacity"]')
    expect(flag).to_have_count(1)
    expect(flag).to_be_hidden()
    expect(flag.locator("output")).to_have_count(3)  # weights, usable memory, GPUs needed
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    widget.locator('select[name="model"]').select_option("qwen3-32b")  # the largest preset on the smallest GPU
    state = {"hardware": "a100-sxm-80gb", "model": "qwen3-32b"}
    expect_output(widget, "weights_total", state)
    expect(flag).to_be_hidden()
    assert site_page.evaluate(f"window.inferlab.views[{json.dumps(WIDGET)}].flags.capacity") is False
