"""The first plot of a page (site/static/js/page.js `preparePlotly`, widget.js `drawFigures`): plotly.js is
evaluated and a first figure rehearsed off-screen before any figure comes near, each in an idle moment of its own;
and where a figure is in view before that (a link to the widget), the task that evaluated plotly.js does not also
draw. Tests hold the order of things, not their times: bench/widgets.py times the first plot's longest task."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ALL_READY, READY_TIMEOUT_MS

LESSON = "en/sampling/"  # its first figure is five screens down
pytestmark = pytest.mark.lesson("sampling")

# Whether the first drawing call came in the task that evaluated plotly.js (which sets window.Plotly), and every
# plot thrown away (a node holding a Plotly plot taken out of the document).
WATCH_PLOTLY = """
(() => {
  let plotly;
  window.__plotly = { evaluating: false, firstDrawInEvaluation: null, thrownAway: 0 };
  Object.defineProperty(window, 'Plotly', { configurable: true, get: () => plotly, set: (value) => {
    plotly = value;
    window.__plotly.evaluating = true;
    setTimeout(() => { window.__plotly.evaluating = false; });
    for (const name of ['react', 'newPlot']) {
      const draw = value[name];
      value[name] = function (...args) {
        window.__plotly.firstDrawInEvaluation ??= window.__plotly.evaluating;
        return draw.apply(this, args);
      };
    }
  } });
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.removedNodes) if (node.classList?.contains('js-plotly-plot')) window.__plotly.thrownAway++;
    }
  }).observe(document, { childList: true, subtree: true });
})();
"""
FIRST_FIGURE = "() => document.querySelector('[data-figure]').closest('[data-widget]').id"


def open_settled(page, url: str) -> None:
    page.add_init_script(WATCH_PLOTLY)
    page.goto(url)
    page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
    page.evaluate("async () => { await window.inferlab.runtime.settled; }")


def test_plotly_is_made_ready_before_the_first_figure_comes_near(tab_of_its_own, server):
    page = tab_of_its_own
    page.set_viewport_size({"width": 1280, "height": 900})
    open_settled(page, server.url(LESSON))
    widget = page.locator(f"#{page.evaluate(FIRST_FIGURE)}")
    page.wait_for_timeout(500)
    assert page.evaluate("typeof window.Plotly") == "undefined", "no figure is near: plotly.js waits"
    # Scrolled until the widget is a screen and a third below the window: within two screens, beyond the margin
    # at which figures are drawn (600 px).
    for _ in range(3):  # parts laid out as they near the screen move what is below them
        page.evaluate("(id) => { const top = document.getElementById(id).getBoundingClientRect().top;"
                          " scrollBy(0, top - innerHeight * 2.33); }", widget.get_attribute("id"))
    page.wait_for_function("() => window.__plotly.thrownAway > 0", timeout=15_000)
    assert page.evaluate("window.__plotly.firstDrawInEvaluation") is False
    expect(widget.locator(".js-plotly-plot")).to_have_count(0)
    assert page.evaluate("document.querySelectorAll('.js-plotly-plot').length") == 0, "the rehearsal is gone"
    widget.scroll_into_view_if_needed()
    expect(widget.locator("[data-figure] .main-svg").first).to_be_visible()
    expect(widget.locator("[data-figure][data-drawing]")).to_have_count(0)


def test_a_figure_in_view_from_the_start_is_drawn_a_task_after_plotly_js_is_evaluated(tab_of_its_own, server):
    page = tab_of_its_own
    page.set_viewport_size({"width": 1280, "height": 900})
    open_settled(page, server.url(LESSON))
    widget_id = page.evaluate(FIRST_FIGURE)
    page.goto(server.url(LESSON) + f"#{widget_id}")  # a new page whose figure is in view before Python settles
    widget = page.locator(f"#{widget_id}")
    expect(widget.locator("[data-figure] .main-svg").first).to_be_visible(timeout=READY_TIMEOUT_MS)
    assert page.evaluate("window.__plotly.firstDrawInEvaluation") is False
    assert page.evaluate("window.__plotly.thrownAway") == 0, "nothing rehearsed once a plot is drawn"
