"""On a 375 px phone, tables and display formulas fit their frame with legible text (FRAMES, checked on every page
in test_lessons.py's phone visit), and the batch-throughput plot's band names stay inside the plot, clear of its
axis and its curves.

Tables of four columns or more stack their rows into cards (sim/kit/table.py, the container query in site.css);
a display formula broken with \\ wraps its lines (builder/mathml.py). Plotly does not know how wide a phone draws a
plot, so the band names are short lines the widget places itself (sim/widgets/batch_throughput.py).
"""

from __future__ import annotations

import pytest

from builder import urls
from tests.browser.conftest import open_all_ready, show_figures

PHONE = {"width": 375, "height": 800}
SMALLEST_PX = 10.95  # 11 px, as drawn (a MathML script is drawn at 71% of its base, 11.36 px at the smallest)

# Every frame that holds a table or a display formula and is shown: how far its content reaches beyond it, and its
# smallest text (the elements that hold text themselves, and the headings a stacked table draws before a cell).
FRAMES = """() => [...document.querySelectorAll('.scroll-x')]
  .filter(f => f.querySelector('table, math[display=block]') && f.getClientRects().length && !f.closest('[hidden]'))
  .map(f => {
    let smallest = Infinity, where = '';
    for (const e of [f, ...f.querySelectorAll('*')]) {
      if (!e.getClientRects().length) continue;
      const own = [...e.childNodes].some(n => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
      const before = getComputedStyle(e, '::before');
      const sizes = [];
      if (own) sizes.push(parseFloat(getComputedStyle(e).fontSize));
      if (before.content !== 'none' && before.content !== 'normal') sizes.push(parseFloat(before.fontSize));
      for (const px of sizes) if (px < smallest) { smallest = px; where = e.textContent.trim().slice(0, 40); }
    }
    return {label: f.dataset.label, overflow: f.scrollWidth - f.clientWidth, smallest, where};
  })"""


# The plot's band names (g.annotation) as drawn, beside the plot's own box, its y axis (title and tick labels), and
# its curves: points every 2 px along each line, and each marker's box.
PLOT_BOXES = """plot => {
  const box = e => { const r = e.getBoundingClientRect(); return {x0: r.left, x1: r.right, y0: r.top, y1: r.bottom}; };
  const points = [];
  for (const path of plot.querySelectorAll('.scatterlayer path.js-line')) {
    const matrix = path.getScreenCTM(), length = path.getTotalLength();
    for (let at = 0; at <= length; at += 2) {
      const p = path.getPointAtLength(at).matrixTransform(matrix);
      points.push([p.x, p.y]);
    }
  }
  return {
    svg: box(plot.querySelector('svg.main-svg')),
    names: [...plot.querySelectorAll('g.annotation')].map(a => ({text: a.textContent, ...box(a)})),
    axis: [...plot.querySelectorAll('.ytitle, .yaxislayer-above .ytick text')].map(box),
    markers: [...plot.querySelectorAll('.scatterlayer .point')].map(box),
    points,
  };
}"""


def overlaps(a: dict, b: dict, slack: float = 1) -> bool:
    return a["x0"] + slack < b["x1"] and b["x0"] + slack < a["x1"] and a["y0"] + slack < b["y1"] and \
        b["y0"] + slack < a["y1"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_batch_plot_names_its_bands_inside_the_plot_clear_of_its_axis_and_curves(site_page, server, lang):
    site_page.set_viewport_size(PHONE)
    open_all_ready(site_page, server.url(urls.page(lang, "inference-vs-training")))
    plot = show_figures(site_page.locator('[data-widget="batch-throughput"]')).locator(".js-plotly-plot")
    drawn = plot.evaluate(PLOT_BOXES)
    assert len(drawn["names"]) == 2, drawn["names"]  # the compute-bound batch (off the plot) and the memory limit
    assert not overlaps(*drawn["names"]), "the band names cover each other"
    svg = drawn["svg"]
    for name in drawn["names"]:
        assert svg["x0"] <= name["x0"] and name["x1"] <= svg["x1"] and svg["y0"] <= name["y0"] and \
            name["y1"] <= svg["y1"], f"{name['text']!r} reaches outside the plot"
        assert not any(overlaps(name, axis) for axis in drawn["axis"]), f"{name['text']!r} covers the y axis"
        assert not any(overlaps(name, marker) for marker in drawn["markers"]), f"{name['text']!r} covers a marker"
        crossed = [p for p in drawn["points"] if name["x0"] < p[0] < name["x1"] and name["y0"] < p[1] < name["y1"]]
        assert crossed == [], f"{name['text']!r} is drawn over a curve"
