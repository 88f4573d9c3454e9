"""Slow widgets (sim/kit Widget.slow) in a real Chromium with a real Pyodide: their renders run in a second Python
worker, so another widget of the page answers while one of them computes; a render under way says so ("computing…",
aria-busy) and the old readouts are marked as not current; and a render superseded by a newer move never overwrites
it. (Nothing here is timed: the order in which views land is what is checked.)"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser_view, choose, lesson_view, open_all_ready, readouts_show

LESSON = "en/pd-disaggregation/"
pytestmark = pytest.mark.lesson("pd-disaggregation")

# Every view a widget applies, in order, with the state it answers: widget.js's apply, wrapped in the page.
LOG_APPLIED = """() => {
  window.applied = [];
  for (const widget of window.inferlab.widgets) {
    const apply = widget.apply.bind(widget);
    widget.apply = (view, source) => {
      window.applied.push({ id: widget.id, state: view.state });
      apply(view, source);
    };
  }
}"""
SLOW_READY = "() => window.inferlab.slowRuntime !== null && window.inferlab.slowRuntime.status === 'ready'"


def slow_page_ready(page, server):
    open_all_ready(page, server.url(LESSON))
    page.locator("#slo-serving").scroll_into_view_if_needed()  # its worker starts as it nears the screen
    page.wait_for_function(SLOW_READY, timeout=90_000)
    page.evaluate(LOG_APPLIED)


def test_only_the_slow_widgets_get_the_second_worker(site_page, server):
    open_all_ready(site_page, server.url(LESSON))
    site_page.evaluate("async () => { await window.inferlab.runtime.settled; }")
    site_page.wait_for_timeout(500)
    # settled, but slo-serving is far below the first screen: its worker waits for the reader to near it
    assert site_page.evaluate("window.inferlab.slowRuntime.worker === null")
    slow_page_ready(site_page, server)
    assert site_page.evaluate("window.inferlab.widgets.filter(w => w.slow).map(w => w.id)") == ["slo-serving",
                                                                                                "engine-replay"]
    kv = server.url("en/kv-cache-serving/")
    open_all_ready(site_page, kv)
    assert site_page.evaluate("window.inferlab.widgets.filter(w => w.slow).map(w => w.name)") == ["batching-timeline"]
    open_all_ready(site_page, server.url("en/prefill-decode/"))  # no slow widget: no second worker
    assert site_page.evaluate("window.inferlab.slowRuntime") is None


def test_another_widget_answers_while_a_slow_one_computes_and_the_slow_one_says_it_is_computing(site_page, server):
    slow_page_ready(site_page, server)
    slo, other = site_page.locator("#slo-serving"), site_page.locator("#prefill-interference")
    # A setting no test computes elsewhere: a goodput search of its own, hundreds of ms in Pyodide.
    slo.locator('input[name="decode_gpus"]').fill("3")  # unused by chunked prefill: answered from the cache
    choose(slo.locator('input[data-name="workload"][value="code"]'))
    readouts_show(slo, lesson_view(site_page, "slo-serving", decode_gpus=3, workload="code"), ("ttft_p50_ms",))
    choose(slo.locator('input[data-name="policy"][value="disaggregated"]'))
    expect(slo).to_have_attribute("data-busy", "")  # still computing: the other widget is moved meanwhile
    expect(slo.locator(".widget-busy")).to_be_visible()
    expect(slo.locator('output[name="attainment"]').first).to_have_attribute("aria-busy", "")
    other.locator('select[name="chunk_tokens"]').select_option("512")

    want = lesson_view(site_page, "slo-serving", decode_gpus=3, workload="code", policy="disaggregated")
    readouts_show(slo, want, ("ttft_p50_ms", "tpot_p90_ms", "goodput_rps_per_gpu"))
    expect(slo).not_to_have_attribute("data-busy", "")
    expect(slo.locator(".widget-busy")).to_be_hidden()
    expect(slo.locator('output[name="attainment"]').first).not_to_have_attribute("aria-busy", "")
    assert browser_view(site_page, "slo-serving") == want
    applied = site_page.evaluate("window.applied")
    quick = next(k for k, a in enumerate(applied) if a["id"] == "prefill-interference")
    slow = next(k for k, a in enumerate(applied) if a["id"] == "slo-serving" and a["state"]["policy"] == "disaggregated")
    assert quick < slow  # asked for after the slow move, answered before it: it did not wait
    slow_renders = site_page.evaluate("window.inferlab.slowRuntime.seq")
    assert slow_renders >= 1  # the slow widget's renders went to its own worker


def test_a_superseded_render_never_overwrites_a_newer_one(site_page, server):
    slow_page_ready(site_page, server)
    slo = site_page.locator("#slo-serving")
    rate = slo.locator('input[name="rate"]')
    for value in ("1.5", "2.5", "3.5", "4.5"):  # faster than the renders: the ones between are dropped
        rate.fill(value)
    want = lesson_view(site_page, "slo-serving", rate=4.5)
    readouts_show(slo, want, ("ttft_p50_ms", "attainment"))
    rates = [a["state"]["rate"] for a in site_page.evaluate("window.applied") if a["id"] == "slo-serving"]
    assert rates[-1] == 4.5
    assert rates == sorted(rates)  # each view applied answers a later move than the one before it
    assert browser_view(site_page, "slo-serving")["state"]["rate"] == 4.5
