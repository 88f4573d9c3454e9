"""The matmul-shapes widget (GEMM versus GEMV) in a real Chromium with a real Pyodide."""

import json

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser_view, cpython_view, open_ready, wait_for_output

LESSON = "prefill-decode/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
WIDGET = "matmul-shapes"





def edge_labels(widget, figure: str) -> list[str]:
    return widget.locator(f'[data-svg="{figure}"] .layout-wide text.edge-label').all_text_contents()


def test_figures_and_readouts_are_there_before_python(site_page, server):
    site_page.goto(server.url(LESSON))
    widget = site_page.locator(f"#{WIDGET}")
    # the lesson's example prompt, five tokens in every language
    expect(widget.locator('output[name="gemm_intensity"]')).to_have_text("4.994 FLOP/B")
    expect(widget.locator('[data-svg="gemm"] .layout-wide svg')).to_have_attribute("role", "img")
    assert "T = 5" in edge_labels(widget, "gemm") and "d = 5,120" in edge_labels(widget, "gemv")
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)
    expect(widget.locator('input[name="T"]')).to_be_enabled()


def test_typing_t_changes_gemm_and_leaves_gemv_alone(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), WIDGET)
    gemv_before = widget.locator('output[name="gemv_intensity"]').get_attribute("data-value")
    widget.locator('input[name="T"]').fill("2048")
    expected = cpython_view(WIDGET, {"T": 2048})["outputs"]
    wait_for_output(widget, "gemm_intensity", expected["gemm_intensity"]["value"])
    wait_for_output(widget, "T", 2048)  # the dimension table follows
    expect(widget.locator('[data-svg="gemm"] .layout-wide text.edge-label').first).to_have_text("T = 2,048")
    assert edge_labels(widget, "gemv")[0] == "1"
    assert widget.locator('output[name="gemv_intensity"]').get_attribute("data-value") == gemv_before
    assert float(gemv_before) == pytest.approx(1, abs=1e-3)
    expect(widget.locator('[data-derivation="gemm_intensity"]')).to_contain_text("< T = 2,048")


def test_small_scale_draws_grids_of_cells(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), WIDGET)
    gemm_cells = widget.locator('[data-svg="gemm"] .layout-wide rect.cell')
    expect(gemm_cells).to_have_count(0)
    widget.locator('.control-choice label:has(input[value="small"])').click()
    expect(gemm_cells).to_have_count(4 * 6 + 6 * 8 + 4 * 8)
    expect(widget.locator('[data-svg="gemv"] .layout-wide rect.cell')).to_have_count(1 * 6 + 6 * 8 + 1 * 8)
    assert edge_labels(widget, "gemm")[:2] == ["T = 4", "d = 6"]
    expect(widget.locator('[data-flag="small_scale"]')).to_be_visible()
    expect(widget.locator('[data-flag="real_scale"]')).to_be_hidden()
    # The table highlights the column that is drawn.
    background = "el => getComputedStyle(el).backgroundColor"
    small_cell = widget.locator("td.scale-small").first.evaluate(background)
    real_cell = widget.locator("td.scale-real").first.evaluate(background)
    assert small_cell != real_cell
    site_page.wait_for_function(f"() => location.search.includes('{WIDGET}.scale=small')")


@pytest.mark.parametrize("state", [
    {"T": 2048},
    {"T": 300, "scale": "small", "model": "llama-2-7b"},
    {"T": 32768, "model": "qwen3-32b"},
])
def test_browser_view_equals_cpython_render(site_page, server, state):
    query = "&".join(f"{WIDGET}.{k}={v}" for k, v in state.items())
    open_ready(site_page, server.url(f"{LESSON}?{query}"), WIDGET)
    site_page.wait_for_function(f"() => window.inferlab.views[{json.dumps(WIDGET)}] !== undefined")
    assert browser_view(site_page, WIDGET) == cpython_view(WIDGET, {**state, "lang": "zh"})
