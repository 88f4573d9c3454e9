"""The decode-ceiling widget on the inference-vs-training lesson, in a real Chromium with a real Pyodide."""


import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser_view, choose, cpython_view, open_ready, show_figures, wait_for_output

LESSON = "inference-vs-training/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
ID = "decode-ceiling"




def assert_same_view(page, expected: dict) -> None:
    """The browser's view equals CPython's; plotly.js fills in layout defaults, so figures compare by their data."""
    got = browser_view(page, ID)
    assert {k: v for k, v in got.items() if k != "figures"} == {k: v for k, v in expected.items() if k != "figures"}
    assert [(t["x"], t["y"]) for t in got["figures"]["ratios"]["data"]] == \
        [(t["x"], t["y"]) for t in expected["figures"]["ratios"]["data"]]



def test_ceiling_reads_before_python_and_becomes_ready(site_page, server):
    site_page.goto(server.url(LESSON))
    widget = site_page.locator(f"#{ID}")
    expect(widget.locator('output[name="gap"]')).to_have_text("153×")
    show_figures(widget)
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)


def test_faster_gpu_buys_compute_not_decode(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    widget.locator('select[name="hardware"]').select_option("h100-sxm")
    expected = cpython_view("decode-ceiling", {"hardware": "h100-sxm"})
    wait_for_output(widget, "ceiling_tokens_per_s", expected["outputs"]["ceiling_tokens_per_s"]["value"])
    expect(widget.locator('output[name="compute_vs_a100"]')).to_have_text("×3.17")
    expect(widget.locator('output[name="decode_vs_a100"]')).to_have_text("×1.64")
    show_figures(widget)
    opacity = widget.locator('[data-figure="ratios"]').evaluate("el => el.data[1].marker.opacity")
    assert opacity == [0.45, 1.0, 0.45, 0.45]
    assert_same_view(site_page, expected)


def test_preset_fills_params_and_editing_switches_to_custom(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    widget.locator('select[name="model"]').select_option("qwen3.8-27b")
    expect(widget.locator('input[name="params_b"]')).to_have_value("26")
    wait_for_output(widget, "step_ms", cpython_view("decode-ceiling", {"model": "qwen3.8-27b"})["outputs"]["step_ms"]["value"])
    widget.locator('input[name="params_b"]').fill("70")
    expect(widget.locator('select[name="model"]')).to_have_value("custom")
    expected = cpython_view("decode-ceiling", {"model": "custom", "params_b": 70})
    wait_for_output(widget, "weights_gb", 140)
    assert_same_view(site_page, expected)
    # Back to a preset: its size comes back into the field.
    widget.locator('select[name="model"]').select_option("llama-2-7b")
    expect(widget.locator('input[name="params_b"]')).to_have_value("7")


def test_weight_format_buttons_raise_the_intensity(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    choose(widget.locator(f'input[name="{ID}-weight_dtype"][value="int4"]'))
    wait_for_output(widget, "intensity", 4)
    expected = cpython_view("decode-ceiling", {"weight_dtype": "int4"})
    wait_for_output(widget, "gap", expected["outputs"]["gap"]["value"])
    assert_same_view(site_page, expected)


@pytest.mark.parametrize("state", [
    {"model": "custom", "params_b": 405, "weight_dtype": "fp8", "hardware": "b200"},
    {"model": "qwen3-32b", "hardware": "h200-sxm"},
])
def test_link_restores_a_scenario(site_page, server, state):
    query = "&".join(f"{ID}.{k}={v}" for k, v in state.items())
    widget = open_ready(site_page, server.url(f"{LESSON}?{query}"), ID)
    expected = cpython_view("decode-ceiling", state)
    wait_for_output(widget, "ceiling_tokens_per_s", expected["outputs"]["ceiling_tokens_per_s"]["value"])
    assert_same_view(site_page, expected)


def test_a_70b_that_does_not_fit_one_a100_raises_the_capacity_flag(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    flag, note = widget.locator('[data-flag="capacity"]'), widget.locator('[data-flag="tensor_parallel"]')
    expect(flag).to_be_hidden()
    expect(note).to_be_hidden()
    widget.locator('input[name="params_b"]').fill("70")
    expect(widget.locator('select[name="model"]')).to_have_value("custom")
    wait_for_output(widget, "gpus_needed", 2)
    expect(flag).to_be_visible()
    expect(note).to_be_visible()
    expect(flag.locator('output[name="weights_total"]')).to_have_text("140.0 GB")
    expect(flag.locator('output[name="usable_memory"]')).to_have_text("85.90 GB")  # the 81,920 MiB an A100 reports
    expect(flag.locator('output[name="gpus_needed"]')).to_have_text("2")
    # The ceiling is that of two A100s in tensor parallel, each reading 70 GB, and says so beneath it.
    expect(widget.locator('output[name="ceiling_tokens_per_s"]')).to_have_text("29.13 tok/s")
    expect(widget.locator('output[name="gpus"]').first).to_have_text("2 张 A100 张量并行（理想值）")
    assert_same_view(site_page, cpython_view("decode-ceiling", {"model": "custom", "params_b": 70}))
    widget.locator('input[name="params_b"]').fill("30")
    wait_for_output(widget, "gpus_needed", 1)
    expect(flag).to_be_hidden()


def test_bandwidth_efficiency_lowers_the_ceiling(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    full = cpython_view("decode-ceiling", {})["outputs"]["ceiling_tokens_per_s"]["value"]
    widget.locator('input[name="bandwidth_efficiency"]').fill("0.8")
    expected = cpython_view("decode-ceiling", {"bandwidth_efficiency": 0.8})
    wait_for_output(widget, "ceiling_tokens_per_s", expected["outputs"]["ceiling_tokens_per_s"]["value"])
    assert expected["outputs"]["ceiling_tokens_per_s"]["value"] == pytest.approx(0.8 * full, rel=1e-5)
    expect(widget.locator('output[name="ceiling_tokens_per_s"]')).to_have_text("123.4 tok/s")
    expect(widget.locator('[data-flag="capacity"]')).to_be_hidden()
    assert_same_view(site_page, expected)
    site_page.wait_for_function("() => location.search.includes('decode-ceiling.bandwidth_efficiency=0.8')")

