"""The request-path widget in a real Chromium with a real Pyodide: cells are radios laid out as a diagram."""

import json
import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser_view, cpython_view, open_ready

LESSON = "prefill-decode/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
WIDGET = "request-path"
READOUTS = ("step_bytes", "step_flops", "step_ms", "step_note", "decode_ms")
ACCENT = "rgb(29, 78, 216)"  # --accent in site.css (light theme): the checked cell's fill



def cell(widget, step: str):
    return widget.locator(f'input[data-name="step"][value="{step}"]')


def cell_label(widget, step: str):
    """What the student clicks: the diagram cell, a label over its transparent radio."""
    return widget.locator(f'label:has(input[data-name="step"][value="{step}"])')


def cell_box(widget, step: str):
    """What the student sees: the cell's box, filled when its radio is checked."""
    return cell_label(widget, step).locator("span").first


def expect_readouts(widget, state: dict) -> None:
    """Python in the page has answered with CPython's outputs for state, and every readout shows them."""
    expected = cpython_view(WIDGET, state)["outputs"]
    widget.page.wait_for_function(
        "([id, expected]) => JSON.stringify(window.inferlab.views[id]?.outputs) === JSON.stringify(expected)",
        arg=[WIDGET, expected])
    expect_shown(widget, expected)


def expect_shown(widget, expected: dict) -> None:
    """Every readout shows the expected outputs: the text, and the raw value."""
    for name in READOUTS:
        out = widget.locator(f'output[name="{name}"]')
        expect(out).to_have_text(expected[name]["text"])
        # Compared as numbers: JavaScript writes 1.6e-05 as "0.000016".
        assert float(out.get_attribute("data-value")) == expected[name]["value"], name


def test_diagram_is_pre_rendered_with_the_lesson_cell(site_page, server):
    site_page.goto(server.url(LESSON))
    widget = site_page.locator(f"#{WIDGET}")
    state = json.loads(widget.locator("script.widget-data").text_content())["state"]
    expect(widget.locator('input[data-name="step"]')).to_have_count(7)
    expect(cell(widget, state["step"])).to_be_checked()
    expect_shown(widget, cpython_view(WIDGET, state)["outputs"])
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)
    expect(cell(widget, "compute")).to_be_enabled()


def test_clicking_a_cell_shows_its_numbers(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), WIDGET)
    cell_label(widget, "compute").click()
    expect(cell(widget, "compute")).to_be_checked()
    expect_readouts(widget, {"step": "compute"})
    assert widget.locator('output[name="step_flops"]').get_attribute("data-value") == str(51_249_500_000)
    expect(cell_box(widget, "compute")).to_have_css("background-color", ACCENT)
    expect(cell_box(widget, "read-weights")).not_to_have_css("background-color", ACCENT)
    cell_label(widget, "write-cache").click()
    expect_readouts(widget, {"step": "write-cache"})
    site_page.wait_for_function("() => location.search.includes('request-path.step=write-cache')")


def test_arrow_keys_move_between_cells(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), WIDGET)
    cell_label(widget, "read-weights").click()
    expect_readouts(widget, {"step": "read-weights"})
    cell(widget, "read-weights").focus()
    site_page.keyboard.press("ArrowRight")
    expect(cell(widget, "read-cache")).to_be_checked()
    expect(cell(widget, "read-cache")).to_be_focused()
    expect_readouts(widget, {"step": "read-cache"})
    assert widget.locator('output[name="step_bytes"]').get_attribute("data-value") == str(302_318_000)
    site_page.keyboard.press("ArrowLeft")
    site_page.keyboard.press("ArrowLeft")
    expect(cell(widget, "write-cache")).to_be_checked()
    expect_readouts(widget, {"step": "write-cache"})


def test_switching_gpu_changes_the_numbers(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), WIDGET)
    cell_label(widget, "read-weights").click()
    expect_readouts(widget, {"step": "read-weights"})
    h100_ms = widget.locator('output[name="step_ms"]').get_attribute("data-value")
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    expect_readouts(widget, {"step": "read-weights", "hardware": "a100-sxm-80gb"})
    assert widget.locator('output[name="step_ms"]').get_attribute("data-value") != h100_ms
    widget.locator('select[name="state_dtype"]').select_option("bf16")
    cell_label(widget, "read-cache").click()
    expect_readouts(widget, {"hardware": "a100-sxm-80gb", "state_dtype": "bf16", "step": "read-cache"})


def test_link_restores_a_cell_and_equals_cpython(site_page, server):
    state = {"step": "sample", "hardware": "b200", "model": "llama-2-7b", "state_dtype": "bf16"}
    query = "&".join(f"{WIDGET}.{k}={v}" for k, v in state.items())
    widget = open_ready(site_page, server.url(f"{LESSON}?{query}"), WIDGET)
    expect(cell(widget, "sample")).to_be_checked()
    site_page.wait_for_function(f"() => window.inferlab.views[{json.dumps(WIDGET)}] !== undefined")
    assert site_page.evaluate(f"window.inferlab.views[{json.dumps(WIDGET)}]") == cpython_view(WIDGET, state)
    expect_readouts(widget, state)


def test_capacity_flag_is_drawn_with_the_kits_markup_and_off_for_the_presets(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), WIDGET)
    flag = widget.locator('p.flag.flag-warning[data-flag="capacity"]')
    expect(flag).to_have_count(1)
    expect(flag).to_be_hidden()
    for name in ("weights_total", "usable_memory", "gpus_needed"):
        expect(flag.locator(f'output[name="{name}"]')).to_have_count(1)
    expect(flag.locator('output[name="weights_total"]')).to_have_text("55.56 GB")  # the anchor's whole checkpoint
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    widget.locator('select[name="model"]').select_option("qwen3-32b")
    state = {"step": "prefill", "hardware": "a100-sxm-80gb", "model": "qwen3-32b"}  # the lesson shows prefill
    expect_readouts(widget, state)
    expect(flag.locator('output[name="weights_total"]')).to_have_text(
        cpython_view(WIDGET, state)["outputs"]["weights_total"]["text"])
    expect(flag).to_be_hidden()


# --- The English page: the same widget with the English running example ------------------------------------------

EN_LESSON = "en/prefill-decode/"
EN = {"lang": "en"}
# CJK ideographs, CJK punctuation (「」) and full-width forms (，：（）).
CHINESE = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"


def test_english_diagram_counts_and_quotes_the_english_example(site_page, server):
    site_page.goto(server.url(EN_LESSON))
    widget = site_page.locator(f"#{WIDGET}")
    state = json.loads(widget.locator("script.widget-data").text_content())["state"]
    assert state["lang"] == "en"
    expect(cell(widget, state["step"])).to_be_checked()
    expect_shown(widget, cpython_view(WIDGET, state)["outputs"])
    # The labels and hints count the English prompt's 5 tokens; the loop feeds in "Mary".
    expect(cell_label(widget, "prefill").locator("b")).to_have_text("Prefill: 5 tokens in one pass")
    expect(cell_label(widget, "prefill").locator("small")).to_have_text("weights read once, shared by 5 tokens")
    expect(cell_label(widget, "tokenize")).to_contain_text("CPU · text → 5 ids")
    expect(cell_label(widget, "read-cache")).to_contain_text("5 KV rows + recurrent state")
    expect(widget.locator(".rp-loop-title")).to_have_text(
        "Decode loop: one turn per token (the first turn feeds in “Mary”)")
    expect(widget.locator(".widget-text-body")).to_contain_text("The prompt “Tom gave the apple to” is taken as 5 tokens")
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)
    visible = widget.evaluate("w => w.innerText")
    assert not re.search(CHINESE, visible), visible


def test_english_clicking_a_cell_changes_the_readouts_and_equals_cpython(site_page, server):
    widget = open_ready(site_page, server.url(EN_LESSON), WIDGET)
    before = widget.locator('output[name="step_note"]').text_content()
    cell_label(widget, "compute").click()
    expect(cell(widget, "compute")).to_be_checked()
    state = {**EN, "step": "compute"}
    expect_readouts(widget, state)
    assert widget.locator('output[name="step_note"]').text_content() != before
    # 2 × 25,623,939,584 + 5 cached tokens × 393,216 FLOPs = 51,249,845,248: the English prompt's 5 tokens.
    assert widget.locator('output[name="step_flops"]').get_attribute("data-value") == str(51_249_800_000)
    assert browser_view(site_page, WIDGET) == cpython_view(WIDGET, state)
    cell_label(widget, "read-cache").click()
    state = {**EN, "step": "read-cache"}
    expect_readouts(widget, state)
    assert widget.locator('output[name="step_bytes"]').get_attribute("data-value") == str(302_383_000)
    assert browser_view(site_page, WIDGET) == cpython_view(WIDGET, state)
    assert not re.search(CHINESE, widget.evaluate("w => w.innerText"))
    site_page.wait_for_function("() => location.search.includes('request-path.step=read-cache')")


def test_english_link_restores_a_cell_and_equals_cpython(site_page, server):
    state = {"step": "prefill", "hardware": "a100-sxm-80gb", "model": "llama-2-7b", "state_dtype": "bf16"}
    query = "&".join(f"{WIDGET}.{k}={v}" for k, v in state.items())
    widget = open_ready(site_page, server.url(f"{EN_LESSON}?{query}"), WIDGET)
    expect(cell(widget, "prefill")).to_be_checked()
    site_page.wait_for_function(f"() => window.inferlab.views[{json.dumps(WIDGET)}] !== undefined")
    assert browser_view(site_page, WIDGET) == cpython_view(WIDGET, {**EN, **state})
    expect_readouts(widget, {**EN, **state})
