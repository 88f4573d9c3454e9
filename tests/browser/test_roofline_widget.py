"""The roofline widget in a real Chromium with a real Pyodide, on the lesson page."""

from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from sim.widgets import roofline as roofline_widget
from tests.browser.conftest import browser_view, cpython_view, open_ready, plotted, show_figures, wait_for_output

LESSON = "prefill-decode/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))



def initial_state(page, widget_id: str = "roofline") -> dict:
    """The state the lesson configured (the widget's JSON island)."""
    return page.evaluate(f"JSON.parse(document.querySelector('#{widget_id} script.widget-data').textContent).state")


def expected(page, **changes) -> dict:
    """CPython's view for the lesson's state with `changes`, through JSON as the browser receives it."""
    return cpython_view("roofline", {**initial_state(page), **changes})



def test_page_reads_before_python_and_becomes_ready(site_page, server):
    site_page.goto(server.url(LESSON))
    widget = site_page.locator("#roofline")
    # Pre-rendered figures are there at once, before the worker has answered anything.
    pre = expected(site_page)
    expect(widget.locator('output[name="decode_ms"]')).to_have_text(pre["outputs"]["decode_ms"]["text"])
    show_figures(widget)
    expect(widget.locator('[data-svg="bytes"] svg')).to_have_count(2)  # drawn for a desktop and for a phone
    expect(widget).to_have_attribute("data-state", "ready", timeout=60_000)
    expect(widget.locator(".widget-status")).to_be_hidden()
    expect(widget.locator('input[name="T"]')).to_be_enabled()


def test_slider_moves_update_readouts_and_plot(site_page, server):
    widget = open_ready(site_page, server.url(LESSON))
    plot = show_figures(widget).locator('[data-figure="roofline"]')
    before_x = plot.evaluate("el => el.data[2].x[0]")
    slider = widget.locator("#roofline-T-slider")
    stops = [int(v) for v in slider.get_attribute("data-stops").split(",")]
    assert stops == list(roofline_widget.WIDGET.control("T").stops())  # the page only looks positions up
    position = next(i for i, v in enumerate(stops) if v >= 2048)
    slider.fill(str(position))  # a log slider: its position is an index into the stops Python rendered
    t = int(widget.locator('input[name="T"]').input_value())
    assert t == stops[position] and 2000 < t < 2200
    assert slider.get_attribute("aria-valuetext") == str(t)  # read out as the value, not the position
    wait_for_output(widget, "prefill_ms", expected(site_page, T=t)["outputs"]["prefill_ms"]["value"])
    assert plotted(plot, "el => el.data[2].x[0]") > 100 * before_x
    # Keyboard: the browser's own; arrows step one stop, Home/End jump to the ends.
    slider.focus()
    slider.press("End")
    expect(widget.locator('input[name="T"]')).to_have_value("32768")
    slider.press("ArrowLeft")
    expect(widget.locator('input[name="T"]')).to_have_value(str(stops[-2]))
    wait_for_output(widget, "prefill_ms", expected(site_page, T=stops[-2])["outputs"]["prefill_ms"]["value"])
    # A typed value places the thumb on the last stop not above it.
    widget.locator('input[name="T"]').fill("3000")
    expect(slider).to_have_value(str(max(i for i, v in enumerate(stops) if v <= 3000)))
    # T = 32,768: the matmuls and attention are compute-bound, writing the recurrent state is not.
    widget.locator('input[name="T"]').fill("32768")
    note = widget.locator('output[name="prefill_bound"]')
    expect(note).to_have_text(expected(site_page, T=32768)["outputs"]["prefill_bound"]["text"])
    expect(note).to_have_text("权重矩阵乘与注意力算力受限，其余带宽受限")


# The markers drawn away from where their data and the plot's axes put them (in pixels, half a pixel allowed).
MISPLACED_POINTS = """el => {
  const {xaxis, yaxis} = el._fullLayout, misplaced = [];
  el.querySelectorAll(".scatterlayer .trace").forEach((trace, i) => trace.querySelectorAll(".point").forEach((point, j) => {
    const [x, y] = point.getAttribute("transform").match(/translate\\(([-\\d.e]+),([-\\d.e]+)\\)/).slice(1).map(Number);
    const want = [xaxis.d2p(el.data[i].x[j]), yaxis.d2p(el.data[i].y[j])];
    if (Math.abs(x - want[0]) > 0.5 || Math.abs(y - want[1]) > 0.5) misplaced.push({trace: i, point: j, x, y, want});
  }));
  return misplaced;
}"""


def test_a_move_of_points_only_is_animated_and_lands_where_the_axes_put_its_data(site_page, server):
    widget = open_ready(site_page, server.url(LESSON))
    plot = show_figures(widget).locator('[data-figure="roofline"]')
    plot.evaluate("el => { window.__draws = []; el.on('plotly_afterplot', () => __draws.push('whole'));"
                  " el.on('plotly_animated', () => __draws.push('points')); }")
    for t in (512, 4096, 16384):
        widget.locator('input[name="T"]').fill(str(t))
        wait_for_output(widget, "prefill_ms", expected(site_page, T=t)["outputs"]["prefill_ms"]["value"])
        show_figures(widget)
    assert plot.evaluate("el => el.querySelectorAll('.scatterlayer .point').length") == 5
    assert set(site_page.evaluate("window.__draws")) == {"points"}  # T moves points only: no whole drawing
    want = expected(site_page, T=16384)["figures"]["roofline"]["data"]
    assert plotted(plot, "el => el.data.map(t => [t.x, t.y])") == [[t["x"], t["y"]] for t in want]
    assert plot.evaluate(MISPLACED_POINTS) == []
    # Another GPU moves the roof and renames it: drawn whole.
    site_page.evaluate("window.__draws = []")
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    wait_for_output(widget, "decode_ms", expected(site_page, T=16384, hardware="a100-sxm-80gb")["outputs"]["decode_ms"]["value"])
    assert plotted(plot, "el => el.data[0].y[2]") == pytest.approx(312)
    assert site_page.evaluate("window.__draws") == ["whole"]
    assert plot.evaluate(MISPLACED_POINTS) == []


def test_batch_moves_the_weight_matmuls_point_right_while_the_real_point_stalls(site_page, server):
    widget = open_ready(site_page, server.url(LESSON))
    widget.locator('input[name="context"]').fill("4096")
    plot = show_figures(widget).locator('[data-figure="roofline"]')
    xs = []
    for b in (1, 16, 256):
        widget.locator('input[name="B"]').fill(str(b))
        wait_for_output(widget, "decode_intensity", expected(site_page, B=b, context=4096)["outputs"]["decode_intensity"]["value"])
        xs.append(plotted(plot, "el => [el.data[3].x[0], el.data[4].x[0], el.data[5].x[0]]"))
    (real1, weights1, attention1), _, (real256, weights256, attention256) = xs
    assert weights1 == 1 and weights256 == 256  # the weight matmuls: B x 2N FLOPs over 2N bytes of BF16 weights
    assert real256 < 100 and real256 / real1 < 100  # KV and state are not: the real point stalls below ~93
    # Decode attention: the GQA group size, 6, times 4,096 cached rows read over 4,097 moved.
    assert attention1 == attention256 == pytest.approx(6 * 4096 / 4097, rel=1e-5)
    # The byte bars show the split: KV and state grow with B, weights stay.
    kinds = widget.locator('[data-svg="bytes"] rect[data-kind]')
    assert kinds.count() >= 6


def test_typing_numbers_updates_readouts_flag_and_url(site_page, server):
    widget = open_ready(site_page, server.url(LESSON))
    widget.locator('input[name="context"]').fill("4096")
    widget.locator('input[name="B"]').fill("71")  # the most that fit in the 85.52 GB an H100 reports
    wait_for_output(widget, "tokens_per_s", 2592.29)
    wait_for_output(widget, "max_batch", 71)
    expect(widget.locator('[data-flag="overflow"]')).to_be_hidden()
    expect(widget.locator('[data-flag="capacity"]')).to_be_hidden()
    assert widget.locator("#roofline-B-slider").input_value() != "0"  # the slider followed the number
    widget.locator('input[name="B"]').fill("72")
    flag = widget.locator('[data-flag="overflow"]')
    expect(flag).to_be_visible()
    expect(flag.locator('output[name="max_batch"]')).to_have_text("71")
    site_page.wait_for_function("() => location.search.includes('roofline.B=72')")
    query = parse_qs(urlparse(site_page.url).query)
    assert query["roofline.B"] == ["72"]


def test_ops_diagram_colours_each_operation_by_its_bound(site_page, server):
    widget = open_ready(site_page, server.url(LESSON))
    widget.locator('input[name="context"]').fill("4096")
    segments = widget.locator('[data-svg="ops"] .layout-wide rect[data-op]')

    def decode_fills() -> list[str]:
        # Segments in order: prefill's operations, then decode's (each step starts with its matmuls).
        fills = segments.evaluate_all("els => els.map(e => [e.dataset.op, e.getAttribute('fill')])")
        start = [i for i, (op, _) in enumerate(fills) if op == "matmuls"][1]
        return [fill for _, fill in fills[start:]]

    widget.locator('input[name="B"]').fill("512")
    wait_for_output(widget, "decode_ms", 113.709)
    assert browser_view(site_page, "roofline")["outputs"]["decode_overlapped_ms"]["value"] == 102.489
    fills = decode_fills()
    assert len(fills) == 3 and fills[0] != fills[1] == fills[2]  # matmuls compute-bound, the rest memory-bound
    expect(widget.locator('output[name="decode_bound"]')).to_have_text("权重矩阵乘算力受限，其余带宽受限")
    ops = widget.locator('[data-svg="ops"] .layout-wide svg')
    expect(ops).to_have_attribute("aria-label", expected(site_page, B=512, context=4096)["svg"]["ops"].split(
        'aria-label="')[1].split('"')[0])
    expect(widget.locator('[data-svg="ops"] .layout-wide [data-marker="overlapped"]')).to_have_count(2)
    widget.locator('input[name="B"]').fill("1")
    wait_for_output(widget, "decode_ms", expected(site_page, B=1, context=4096)["outputs"]["decode_ms"]["value"])
    assert len(set(decode_fills())) == 1
    expect(widget.locator('output[name="decode_bound"]')).to_have_text("带宽受限")


def test_critical_batch_follows_the_gpu(site_page, server):
    widget = open_ready(site_page, server.url(LESSON))
    readout = widget.locator('output[name="critical_batch"]')
    expect(readout).to_have_text("296")
    widget.locator('select[name="hardware"]').select_option("h200-sxm")
    expect(readout).to_have_text("207")
    assert expected(site_page, hardware="h200-sxm")["outputs"]["critical_batch"]["value"] == 207


def test_memory_fraction_and_capacity_flag(site_page, server):
    widget = open_ready(site_page, server.url(LESSON))
    widget.locator('input[name="context"]').fill("4096")
    wait_for_output(widget, "max_batch", 71)
    widget.locator('input[name="memory_fraction"]').fill("0.9")
    wait_for_output(widget, "max_batch", 51)
    expect(widget.locator('input[name="memory_fraction"]')).to_have_value("0.9")
    site_page.wait_for_function("() => location.search.includes('roofline.memory_fraction=0.9')")
    # Half of an A100's 85.90 GB cannot hold the 55.56 GB checkpoint: the shared capacity flag says how many GPUs.
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    widget.locator('input[name="memory_fraction"]').fill("0.5")
    flag = widget.locator('[data-flag="capacity"]')
    expect(flag).to_be_visible()
    expect(flag.locator('output[name="gpus_needed"]')).to_have_text("2")
    expect(widget.locator('[data-flag="overflow"]')).to_be_hidden()


def test_derivations_show_the_formula_with_numbers(site_page, server):
    widget = open_ready(site_page, server.url(LESSON))
    details = widget.locator("details.derivation").filter(has=site_page.locator('[data-derivation="decode_ms"]'))
    details.locator("summary").click()
    code = details.locator('[data-derivation="decode_ms"]')
    expect(code).to_be_visible()
    expect(code).to_have_text(expected(site_page)["derivations"]["decode_ms"])
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    expect(code).to_have_text(expected(site_page, hardware="a100-sxm-80gb")["derivations"]["decode_ms"])
    expect(code).to_contain_text("2.039 TB/s")


def test_selects_switch_hardware_model_and_state_dtype(site_page, server):
    widget = open_ready(site_page, server.url(LESSON))
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    wait_for_output(widget, "decode_ms", expected(site_page, hardware="a100-sxm-80gb")["outputs"]["decode_ms"]["value"])
    roof = show_figures(widget).locator('[data-figure="roofline"]').evaluate("el => el.data[0].y[2]")
    assert roof == pytest.approx(312)
    widget.locator('select[name="model"]').select_option("qwen3-32b")
    want = expected(site_page, hardware="a100-sxm-80gb", model="qwen3-32b")
    wait_for_output(widget, "decode_ms", want["outputs"]["decode_ms"]["value"])
    # Qwen3-32B keeps no recurrent state: its state bar has zero width.
    widths = widget.locator('[data-svg="bytes"] .layout-wide rect[data-kind="state"]').evaluate_all(
        "els => els.map(e => Number(e.getAttribute('width')))")
    assert widths == [0, 0]
    widget.locator('select[name="model"]').select_option("qwen3.8-27b")
    widget.locator('select[name="state_dtype"]').select_option("bf16")
    want = expected(site_page, hardware="a100-sxm-80gb", state_dtype="bf16")
    wait_for_output(widget, "decode_ms", want["outputs"]["decode_ms"]["value"])


def test_link_restores_a_scenario(site_page, server):
    widget = open_ready(site_page, server.url(LESSON + "?roofline.T=2048&roofline.hardware=h200-sxm"))
    expect(widget.locator('input[name="T"]')).to_have_value("2048")
    expect(widget.locator('select[name="hardware"]')).to_have_value("h200-sxm")
    wait_for_output(widget, "prefill_ms", expected(site_page, T=2048, hardware="h200-sxm")["outputs"]["prefill_ms"]["value"])
    assert "roofline.T=2048" in site_page.url


def test_bad_link_values_fall_back_to_valid_state(site_page, server):
    payload = "<img src=x onerror=alert(1)>"
    url = server.url(LESSON + f"?roofline.T={payload}&roofline.B=-5&roofline.context=1e99&roofline.model=nan&x.y=1")
    dialogs = []
    site_page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    widget = open_ready(site_page, url)
    expect(widget.locator('input[name="context"]')).to_have_value("131072")
    expect(widget.locator('input[name="B"]')).to_have_value("1")
    expect(widget.locator('input[name="T"]')).to_have_value("4")
    site_page.wait_for_function("() => window.inferlab.views.roofline !== undefined")
    assert browser_view(site_page, "roofline")["state"]["model"] == "qwen3.8-27b"
    assert site_page.locator("img[src=x]").count() == 0 and dialogs == []


@pytest.mark.parametrize("state", [
    {"T": 2048, "B": 58, "context": 4096},
    {"T": 1, "B": 1024, "context": 131072, "hardware": "b200", "model": "llama-2-7b", "state_dtype": "bf16"},
    {"T": 300, "B": 7, "context": 1, "hardware": "a100-sxm-80gb", "model": "qwen3-32b"},
    {"B": 512, "context": 4096, "memory_fraction": 0.9, "compute_efficiency": 0.6, "bandwidth_efficiency": 0.8},
])
def test_browser_view_equals_cpython_render(site_page, server, state):
    query = "&".join(f"roofline.{k}={v}" for k, v in state.items())
    open_ready(site_page, server.url(f"{LESSON}?{query}"))
    site_page.wait_for_function("() => window.inferlab.views.roofline !== undefined")
    assert browser_view(site_page, "roofline") == expected(site_page, **state)


def test_every_element_of_a_name_shows_the_newest_view(site_page, server):
    """A section may show a readout, a derivation or a flag in more than one place (a layout that repeats one, or
    a widget template): each copy follows the view, not only the first."""
    widget = open_ready(site_page, server.url(LESSON))
    site_page.evaluate("""() => {
      const section = document.getElementById('roofline');
      for (const selector of ['[data-derivation="decode_ms"]', '[data-flag="overflow"]']) {
        const copy = section.querySelector(selector).cloneNode(true);
        copy.classList.add('second-copy');
        section.append(copy);
      }
    }""")
    widget.locator('select[name="hardware"]').select_option("a100-sxm-80gb")
    want = expected(site_page, hardware="a100-sxm-80gb")
    expect(widget.locator('.second-copy[data-derivation="decode_ms"]')).to_have_text(want["derivations"]["decode_ms"])
    widget.locator('input[name="B"]').fill("256")
    widget.locator('input[name="B"]').press("Enter")
    assert expected(site_page, hardware="a100-sxm-80gb", B=256)["flags"]["overflow"]
    expect(widget.locator('.second-copy[data-flag="overflow"]')).to_be_visible()
