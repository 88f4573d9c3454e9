"""The phase-table widget on the inference-vs-training lesson, in a real Chromium with a real Pyodide."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser_view, cpython_view, open_ready, wait_for_output

LESSON = "inference-vs-training/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
ID = "phase-table"


def test_table_reads_before_python_and_becomes_ready(site_page, server):
    site_page.goto(server.url(LESSON))
    widget = site_page.locator(f"#{ID}")
    expected = cpython_view("phase-table", {})["outputs"]
    for name in ("prefill_ms", "decode_total_ms", "prefill_share", "decode_share", "ttft_ms", "tpot_ms"):
        expect(widget.locator(f'output[name="{name}"]')).to_have_text(expected[name]["text"])
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)
    expect(widget.locator('input[name="prompt_tokens"]')).to_be_enabled()


def test_long_prompt_makes_prefill_compute_bound(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    widget.locator('input[name="prompt_tokens"]').fill("2048")
    expected = cpython_view("phase-table", {"prompt_tokens": 2048})
    wait_for_output(widget, "prefill_ms", expected["outputs"]["prefill_ms"]["value"])
    expect(widget.locator('output[name="prefill_bound"]')).to_have_text("算力受限为主（混合）")
    expect(widget.locator('output[name="prefill_ops"]')).to_have_text("矩阵乘和注意力算力受限，递归状态带宽受限")
    expect(widget.locator('output[name="decode_bound"]')).to_have_text("带宽受限")
    expect(widget.locator('[data-derivation="prefill_ms"]')).to_have_text(expected["derivations"]["prefill_ms"])
    assert browser_view(site_page, ID) == expected


def test_model_and_gpu_switches_match_cpython(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    widget.locator('select[name="model"]').select_option("llama-2-7b")
    wait_for_output(widget, "tpot_ms", cpython_view("phase-table", {"model": "llama-2-7b"})["outputs"]["tpot_ms"]["value"])
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    expected = cpython_view("phase-table", {"model": "llama-2-7b", "hardware": "a100-sxm-80gb"})
    wait_for_output(widget, "decode_total_ms", expected["outputs"]["decode_total_ms"]["value"])
    expect(widget.locator('output[name="decode_shape"]')).to_have_text("GEMV (1 × 4,096) · (4,096 × 11,008)")
    assert browser_view(site_page, ID) == expected


def test_efficiencies_slow_the_phases(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    expect(widget.locator('[data-flag="capacity"]')).to_be_hidden()
    widget.locator('input[name="bandwidth_efficiency"]').fill("0.5")
    expected = cpython_view("phase-table", {"bandwidth_efficiency": 0.5})
    wait_for_output(widget, "tpot_ms", expected["outputs"]["tpot_ms"]["value"])
    expect(widget.locator('output[name="ttft_ms"]')).to_have_text(expected["outputs"]["ttft_ms"]["text"])
    site_page.wait_for_function("() => location.search.includes('phase-table.bandwidth_efficiency=0.5')")
    assert browser_view(site_page, ID) == expected


@pytest.mark.parametrize("state", [
    {"prompt_tokens": 32768, "output_tokens": 8192, "model": "qwen3-32b", "hardware": "b200"},
    {"prompt_tokens": 1, "output_tokens": 1, "hardware": "h200-sxm"},
    {"prompt_tokens": 4096, "compute_efficiency": 0.6, "bandwidth_efficiency": 0.8},
])
def test_link_restores_a_scenario(site_page, server, state):
    query = "&".join(f"{ID}.{k}={v}" for k, v in state.items())
    widget = open_ready(site_page, server.url(f"{LESSON}?{query}"), ID)
    expected = cpython_view("phase-table", state)
    wait_for_output(widget, "request_ms", expected["outputs"]["request_ms"]["value"])
    assert browser_view(site_page, ID) == expected
