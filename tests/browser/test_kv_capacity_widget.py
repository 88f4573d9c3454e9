"""The kv-capacity widget on the inference-vs-training lesson, in a real Chromium with a real Pyodide."""


import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser_view, choose, cpython_view, open_ready, wait_for_output

LESSON = "inference-vs-training/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
ID = "kv-capacity"
MODEL_FIELDS = ("layers", "kv_heads", "head_dim", "weights_gb")
# The lesson's settings that differ from the widget's defaults: 64 requests, not 32, so that the readout below the
# question "KV of 32 requests of 2,048 tokens" does not give its answer away.
LESSON_SETTINGS = {"batch": 64}


def lesson_view(state: dict) -> dict:
    """CPython's view of the widget on the lesson page, with `state` on top of the lesson's settings."""
    return cpython_view(ID, {**LESSON_SETTINGS, **state})





def test_reference_example_reads_before_python(site_page, server):
    site_page.goto(server.url(LESSON))
    widget = site_page.locator(f"#{ID}")
    expect(widget.locator('output[name="kv_per_token"]')).to_have_text("524,288 B")
    expect(widget.locator('output[name="kv_total"]')).to_have_text("68.72 GB")  # 64 requests × 2,048 tokens × 524,288 B
    # 3 shares + 3 legend keys in the desktop's drawing (the phone's drawing is there too, hidden)
    expect(widget.locator('[data-svg="memory"] .layout-wide svg rect')).to_have_count(6)
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)


def test_preset_fills_fields_and_editing_one_switches_to_custom(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    widget.locator('select[name="model"]').select_option("qwen3.8-27b")
    for name, value in zip(MODEL_FIELDS, ("16", "4", "256", "56")):
        expect(widget.locator(f'input[name="{name}"]')).to_have_value(value)
    wait_for_output(widget, "kv_per_token", 65536)
    assert browser_view(site_page, ID)["outputs"]["state_total"]["value"] > 0  # the hybrid's recurrent state
    widget.locator('input[name="kv_heads"]').fill("8")
    expect(widget.locator('select[name="model"]')).to_have_value("custom")
    wait_for_output(widget, "kv_per_token", 131072)
    expected = lesson_view({"model": "custom", "layers": 16, "kv_heads": 8, "head_dim": 256, "weights_gb": 56})
    wait_for_output(widget, "state_total", 0)
    assert browser_view(site_page, ID) == expected


def test_batch_past_capacity_raises_the_overflow_flag(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    flag = widget.locator('[data-flag="overflow"]')
    expect(flag).to_be_hidden()
    widget.locator('input[name="batch"]').fill("68")  # 67 requests of 2,048 tokens fit beside Llama-2-7B
    wait_for_output(widget, "max_batch", 67)
    expect(flag).to_be_visible()
    expect(widget.locator('[data-svg="memory"]')).to_contain_text("超出")
    assert browser_view(site_page, ID) == lesson_view({"batch": 68})
    widget.locator('input[name="batch"]').fill("67")
    expect(flag).to_be_hidden()


def test_fp8_kv_halves_the_cache(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    choose(widget.locator(f'input[name="{ID}-kv_dtype"][value="fp8"]'))
    wait_for_output(widget, "kv_per_token", 262144)
    assert browser_view(site_page, ID) == lesson_view({"kv_dtype": "fp8"})


@pytest.mark.parametrize("state, flag", [
    ({"model": "qwen3.8-27b", "hardware": "h100-sxm", "tokens": 4096, "batch": 72}, "overflow"),
    ({"model": "custom", "layers": 80, "kv_heads": 8, "head_dim": 128, "weights_gb": 140, "tokens": 8192}, "capacity"),
    ({"model": "qwen3.8-27b", "hardware": "h100-sxm", "tokens": 4096, "batch": 52, "memory_fraction": 0.9}, "overflow"),
])
def test_link_restores_a_scenario(site_page, server, state, flag):
    query = "&".join(f"{ID}.{k}={v}" for k, v in state.items())
    widget = open_ready(site_page, server.url(f"{LESSON}?{query}"), ID)
    expected = lesson_view(state)
    wait_for_output(widget, "memory_left", expected["outputs"]["memory_left"]["value"])
    for name in ("overflow", "capacity"):
        if name == flag:
            expect(widget.locator(f'[data-flag="{name}"]')).to_be_visible()
        else:
            expect(widget.locator(f'[data-flag="{name}"]')).to_be_hidden()
    assert browser_view(site_page, ID) == expected


def test_memory_fraction_shrinks_what_fits_and_shows_the_reserved_share(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    bar = widget.locator('[data-svg="memory"] .layout-wide')
    expect(bar.locator('rect[data-kind="reserved"]')).to_have_count(0)
    wait_for_output(widget, "max_batch", 67)
    widget.locator('input[name="memory_fraction"]').fill("0.9")
    wait_for_output(widget, "max_batch", 59)  # floor((77.31 GB - 13.48 GB) / 1.074 GB)
    expect(widget.locator('output[name="usable_memory"]').first).to_have_text("77.31 GB")
    expect(bar.locator('rect[data-kind="reserved"]')).to_have_count(1)
    expect(bar).to_contain_text("A100 可用 77.31 GB（共 85.90 GB）")
    expect(bar).to_contain_text("预留（引擎不用）")
    assert browser_view(site_page, ID) == lesson_view({"memory_fraction": 0.9})
    site_page.wait_for_function("() => location.search.includes('kv-capacity.memory_fraction=0.9')")


def test_weights_that_do_not_fit_raise_the_capacity_flag(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), ID)
    flag = widget.locator('[data-flag="capacity"]')
    expect(flag).to_be_hidden()
    widget.locator('input[name="weights_gb"]').fill("100")
    expect(widget.locator('select[name="model"]')).to_have_value("custom")
    wait_for_output(widget, "gpus_needed", 2)
    expect(flag).to_be_visible()
    expect(widget.locator('[data-flag="overflow"]')).to_be_hidden()  # a smaller batch would not help
    expect(flag.locator('output[name="weights_total"]')).to_have_text("100.0 GB")
    expect(flag.locator('output[name="gpus_needed"]')).to_have_text("2")
    assert browser_view(site_page, ID) == lesson_view({"model": "custom", "weights_gb": 100})
