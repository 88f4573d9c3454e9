"""On a 375 px phone, every diagram a widget draws ([data-svg] in its sideways-scrolling frame) shows whole: the frame
does not scroll, and every text in it is drawn at 11 px or more, inside its drawing. A diagram wider than a phone
gets there by a narrow drawing of its own (sim/page/svg.py responsive(), picked by the frame's container query).

Parametrised over the course plan, as test_lessons.py is: one test per written lesson, language, widget and
diagram, so a failure names the page and the frame. Each page is measured once (at its first frame's test) and
its frames are looked up from that measurement.
"""

from __future__ import annotations

import re

import pytest

from sim import widgets
from tests.browser.conftest import open_all_ready
from tests.browser.test_lessons import LESSONS, lesson_url

PHONE = {"width": 375, "height": 800}
SMALLEST_PX = 10.95  # 11 px, less what rounding a scale costs
WIDGET = re.compile(r"^::: *widget +([a-z0-9-]+)(?: +id=([A-Za-z0-9_-]+))?", re.MULTILINE)


def frames() -> list:
    """(lesson, widget id, diagram name) for every diagram a lesson's widgets draw, named lang/slug/id/diagram."""
    found = []
    for lesson in LESSONS:
        for name, widget_id in WIDGET.findall(lesson.body):
            for diagram in widgets.render(name, {"lang": lesson.lang})["svg"]:
                found.append(pytest.param(lesson, widget_id or name, diagram, marks=pytest.mark.lesson(lesson.slug),
                                          id=f"{lesson.lang}/{lesson.slug}/{widget_id or name}/{diagram}"))
    return found


# Per visible diagram frame: its widths, and each visible text drawn below 11 px or past its drawing's edges.
# A text's size is its computed font size times its svg's scale (drawn width over viewBox width).
MEASURE = """(smallest) => {
  const found = {};
  for (const holder of document.querySelectorAll('.scroll-x [data-svg]')) {
    const frame = holder.closest('.scroll-x'), widget = holder.closest('[data-widget]');
    const key = `${widget.id}/${holder.dataset.svg}`;
    if (!frame.checkVisibility()) { found[key] = null; continue; }
    const small = [], outside = [];
    for (const text of holder.querySelectorAll('svg text')) {
      if (!text.checkVisibility() || !text.textContent.trim()) continue;
      const svg = text.ownerSVGElement, box = svg.getBoundingClientRect(), view = svg.viewBox.baseVal;
      const scale = view && view.width ? box.width / view.width : 1;
      const px = parseFloat(getComputedStyle(text).fontSize) * scale;
      if (px < smallest) small.push(`${JSON.stringify(text.textContent)} at ${px.toFixed(1)} px`);
      const r = text.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
        outside.push(JSON.stringify(text.textContent));
    }
    found[key] = {scrollWidth: frame.scrollWidth, clientWidth: frame.clientWidth, small, outside};
  }
  return found;
}"""

_measured: dict[str, dict] = {}


def measure(page, url: str) -> dict:
    """Every diagram frame of the page at a phone's width, once Python has answered every widget."""
    if url not in _measured:
        page.set_viewport_size(PHONE)
        open_all_ready(page, url)
        _measured[url] = page.evaluate(MEASURE, SMALLEST_PX)
    return _measured[url]


@pytest.mark.parametrize(("lesson", "widget_id", "diagram"), frames())
def test_a_phone_shows_the_whole_diagram_with_legible_text(site_page, server, lesson, widget_id, diagram):
    found = measure(site_page, lesson_url(server, lesson))
    key = f"{widget_id}/{diagram}"
    assert key in found, f"no frame for {key} on the page: {sorted(found)}"
    frame = found[key]
    if frame is None:
        return  # not shown in the lesson's setting (a flag's panel): nothing drawn to fit
    assert frame["scrollWidth"] <= frame["clientWidth"] + 1, \
        f"{key} is {frame['scrollWidth']} px wide in a {frame['clientWidth']} px frame"
    assert frame["small"] == [], f"{key}: text below 11 px: {frame['small']}"
    assert frame["outside"] == [], f"{key}: text past the drawing's edge: {frame['outside']}"


def plots() -> list:
    """(lesson, widget id, figure name) for every Plotly figure with a legend a lesson's widgets draw."""
    found = []
    for lesson in LESSONS:
        for name, widget_id in WIDGET.findall(lesson.body):
            for figure, spec in widgets.render(name, {"lang": lesson.lang})["figures"].items():
                if "legend" in spec["layout"]:
                    found.append(pytest.param(lesson, widget_id or name, figure,
                                              marks=pytest.mark.lesson(lesson.slug),
                                              id=f"{lesson.lang}/{lesson.slug}/{widget_id or name}/{figure}"))
    return found


# A plot's legend, plot area and axis titles, in page pixels, once the plot is drawn (plots are drawn as they near
# the screen, so the figure is scrolled to first).
PLOT_BOXES = """async ([widgetId, figure]) => {
  const holder = document.querySelector(`#${widgetId} [data-figure="${figure}"]`);
  holder.scrollIntoView({block: 'center'});
  for (let i = 0; i < 200 && !(holder._fullLayout && !('drawing' in holder.dataset)); i++)
    await new Promise(r => setTimeout(r, 50));
  const box = el => { if (!el) return null; const r = el.getBoundingClientRect();
                      return r.width && r.height ? {left: r.left, top: r.top, right: r.right, bottom: r.bottom} : null; };
  const at = holder.getBoundingClientRect(), size = holder._fullLayout._size;
  return {legend: box(holder.querySelector('.legend .bg')),
          area: {left: at.left + size.l, top: at.top + size.t, right: at.left + size.l + size.w,
                 bottom: at.top + size.t + size.h},
          xtitle: box(holder.querySelector('.g-xtitle text')), ytitle: box(holder.querySelector('.g-ytitle text'))};
}"""


def overlap(a: dict, b: dict, slack: float = 1.0) -> bool:
    return (a["left"] < b["right"] - slack and b["left"] < a["right"] - slack and a["top"] < b["bottom"] - slack
            and b["top"] < a["bottom"] - slack)


@pytest.mark.parametrize(("lesson", "widget_id", "figure"), plots())
def test_a_phone_shows_a_plots_legend_clear_of_its_curves_and_axis_titles(site_page, server, lesson, widget_id,
                                                                         figure):
    site_page.set_viewport_size(PHONE)
    open_all_ready(site_page, lesson_url(server, lesson))
    boxes = site_page.evaluate(PLOT_BOXES, [widget_id, figure])
    assert boxes["legend"], f"{widget_id}/{figure}: no legend drawn"
    for part in ("area", "xtitle", "ytitle"):
        if boxes[part]:
            assert not overlap(boxes["legend"], boxes[part]), \
                f"{widget_id}/{figure}: the legend {boxes['legend']} covers the {part} {boxes[part]}"
