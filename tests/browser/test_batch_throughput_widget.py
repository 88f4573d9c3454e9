"""The batch-throughput widget in a real Chromium with a real Pyodide."""

import json
import re

import pytest
from playwright.sync_api import expect

from sim.widgets import batch_throughput
from tests.browser.conftest import cpython_view, open_ready, show_figures, wait_for_output

LESSON = "inference-vs-training/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
ID = "batch-throughput"


def output(widget, name: str) -> float:
    return float(widget.locator(f'output[name="{name}"]').get_attribute("data-value"))


def test_page_reads_before_python_and_becomes_ready(site_page, server):
    site_page.goto(server.url(LESSON))
    widget = site_page.locator(f"#{ID}")
    expect(widget.locator('output[name="total_tokens_per_s"]')).to_have_text("1,542 tok/s")
    expect(widget.locator('.widget-table tr[data-batch="71"] th .warn')).to_have_text("71（上限）")
    show_figures(widget)
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)
    expect(widget.locator('input[name="B"]')).to_be_enabled()


def test_moving_b_changes_both_throughputs(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    total_before = output(widget, "total_tokens_per_s")
    each_before = output(widget, "per_request_tokens_per_s")
    position = batch_throughput.WIDGET.control("B").slider_position(16)  # an index into the slider's stops
    widget.locator(f"#{ID}-B-slider").fill(str(position))
    b = int(widget.locator('input[name="B"]').input_value())
    assert b == 16
    expected = cpython_view(ID, {"B": b, "context": 4096})["outputs"]
    wait_for_output(widget, "total_tokens_per_s", expected["total_tokens_per_s"]["value"])
    wait_for_output(widget, "per_request_tokens_per_s", expected["per_request_tokens_per_s"]["value"])
    assert output(widget, "total_tokens_per_s") < total_before
    assert output(widget, "per_request_tokens_per_s") > each_before
    show_figures(widget)
    marker = widget.locator('[data-figure="throughput"]').evaluate("el => el.data[el.data.length - 1].x")
    assert marker == [16, 16]
    expect(widget.locator(".widget-table tr.current")).to_have_count(0)


def test_pushing_b_past_the_memory_limit_raises_the_flag(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    flag = widget.locator('[data-flag="over_capacity"]')
    widget.locator('input[name="B"]').fill("71")  # 71 fit in the 85.52 GB an H100 reports
    wait_for_output(widget, "total_tokens_per_s", 2592.29)
    expect(flag).to_be_hidden()
    widget.locator('input[name="B"]').fill("72")
    wait_for_output(widget, "total_tokens_per_s", cpython_view(ID, {"B": 72})["outputs"]["total_tokens_per_s"]["value"])
    expect(flag).to_be_visible()
    # A shorter context frees memory: at 1,024 tokens many more requests fit and the flag goes away.
    widget.locator('input[name="context"]').fill("1024")
    wait_for_output(widget, "max_batch", cpython_view(ID, {"B": 72, "context": 1024})["outputs"]["max_batch"]["value"])
    expect(flag).to_be_hidden()


def test_switching_hardware_recomputes_the_table(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    widget.locator('select[name="hardware"]').select_option("h200-sxm")
    expected = cpython_view(ID, {"hardware": "h200-sxm"})
    wait_for_output(widget, "max_batch", expected["outputs"]["max_batch"]["value"])
    first_row = widget.locator('.widget-table tr[data-batch="1"] td').first
    expect(first_row).to_have_text(re.search(r"<td[^>]*>([^<]*)</td>", expected["svg"]["table"]).group(1))


COMPUTE_BAND = "var(--sim-region-compute)"  # as the view names it
DRAWN_BAND = "rgba(124, 58, 237, 0.08)"  # as the page draws it: the light theme's value (widgets.css)


def band_edges(widget) -> list[float]:
    """Left edges of the plot's compute-bound bands (none on an H100, whose critical batch is past 256)."""
    show_figures(widget)
    return widget.locator('[data-figure="throughput"]').evaluate(
        f"el => (el.layout.shapes || []).filter(s => s.fillcolor === {json.dumps(DRAWN_BAND)}).map(s => s.x0)")


def test_switching_to_an_a100_shows_the_compute_bound_band(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    expect(widget.locator('output[name="critical_batch"]')).to_have_text("296")
    assert band_edges(widget) == []
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    wait_for_output(widget, "critical_batch", 154)
    expected = cpython_view(ID, {"hardware": "a100-sxm-80gb"})
    shapes = expected["figures"]["throughput"]["layout"]["shapes"]
    site_page.wait_for_function(
        "() => (document.querySelector('#batch-throughput [data-figure=\"throughput\"]').layout.shapes || [])"
        f".some(s => s.fillcolor === {json.dumps(DRAWN_BAND)})")
    assert band_edges(widget) == [s["x0"] for s in shapes if s.get("fillcolor") == COMPUTE_BAND]
    expect(widget.locator('.widget-table tr[data-batch="154"] th')).to_have_text("154（临界）")
    expect(widget.locator('.widget-table tr[data-batch="154"] td').last).to_have_text("矩阵乘算力受限，其余带宽受限")


def test_memory_fraction_changes_the_limit(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    expect(widget.locator('output[name="max_batch"]')).to_have_text("71")
    widget.locator('input[name="memory_fraction"]').fill("0.9")
    wait_for_output(widget, "max_batch", 51)
    expect(widget.locator('.widget-table tr[data-batch="51"] th .warn')).to_have_text("51（上限）")
    site_page.wait_for_function("() => location.search.includes('batch-throughput.memory_fraction=0.9')")
    # Less than the checkpoint: the capacity flag says how many GPUs the weights need.
    flag = widget.locator('[data-flag="capacity"]')
    expect(flag).to_be_hidden()
    widget.locator('input[name="memory_fraction"]').fill("0.6")
    wait_for_output(widget, "max_batch", 0)
    expect(flag).to_be_visible()
    expect(flag.locator('output[name="gpus_needed"]')).to_have_text("2")
    expect(widget.locator('[data-flag="over_capacity"]')).to_be_hidden()


@pytest.mark.parametrize("state", [
    {"B": 71, "context": 4096},
    {"B": 200, "context": 16, "hardware": "a100-sxm-80gb", "model": "llama-2-7b"},
    {"B": 3, "context": 131072, "model": "llama-2-7b", "state_dtype": "bf16"},
    {"B": 150, "memory_fraction": 0.9, "compute_efficiency": 0.5, "bandwidth_efficiency": 0.8},
])
def test_browser_view_equals_cpython_render(site_page, server, state):
    query = "&".join(f"{ID}.{k}={v}" for k, v in state.items())
    open_ready(site_page, server.url(f"{LESSON}?{query}"), ID)
    site_page.wait_for_function(f"() => window.inferlab.views[{json.dumps(ID)}] !== undefined")
    assert site_page.evaluate(f"window.inferlab.views[{json.dumps(ID)}]") == cpython_view(ID, state)
