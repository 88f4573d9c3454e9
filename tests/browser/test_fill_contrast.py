"""Every diagram's fills that carry meaning stand out from what they touch by 3:1 (WCAG 1.4.11), in both themes.

axe-core checks text, not SVG fills, so these checks read them. Every written lesson in each language has them, in the
light and the dark theme, at desktop and phone width (each width draws its own layout), in test_lessons.py's visits
of the page; here are the rule and the diagrams the lessons' settings do not draw. For every diagram
(`[data-svg] svg`) the page shows, they read from the page, with getComputedStyle and the
geometry of each shape in the diagram's own coordinates (one evaluate per diagram):

- **Shapes**: `rect`, `circle`, `ellipse`, `polygon` and `path` elements that are rendered (not under `defs`,
  `clipPath`, `mask`, `marker`, `pattern` or `symbol`, not `display: none` or `visibility: hidden`), whose fill is a
  colour (computed `fill` not `none`, `fill-opacity × opacity` above 0) and whose box has a width and a height.
  Text is never a shape (its contrast is axe's). A path is split into its subpaths when it is drawn with straight
  lines only (M, L, H, V, Z), so that each cell of a map is a box of its own; any other path is its whole bounding
  box. A fill with an alpha is the colour it paints over the diagram's background.
- A shape's **stroke** counts as its outline when it is a colour (not `none`, alpha above 0), solid (no dash
  array) and at least 1 unit wide; thinner or dashed lines are not a boundary one can follow.
- Two shapes **touch** when their boxes overlap or lie less than 1 unit apart. Shapes a unit or more apart have the
  background between them, against which each is checked anyway.
- **The rule**: where two touching shapes have different fills, their boundary is seen if the two fills differ by
  at least 3:1, or either shape's outline differs by at least 3:1 from both fills. Every shape's boundary against
  the diagram's background (the first opaque `background-color` from the svg up) holds the same rule, with the
  background as the other fill. Shapes of one fill that touch read as one region, and are not checked.

Contrast is WCAG's: (L1 + 0.05) / (L2 + 0.05) of relative luminances.
"""

from __future__ import annotations

import functools
import re

import pytest

from builder import urls
from tests.browser.conftest import LESSONS, open_all_ready

MINIMUM = 3.0
TOUCH = 1.0  # units of the diagram's viewBox: closer than this, two shapes touch

# Each shape of one diagram: its computed fill, fill alpha, stroke (or null) and boxes, in the svg's coordinates.
SHAPES = """(svg) => {
  const SKIP = 'defs, clipPath, mask, marker, pattern, symbol, text';
  const toSvg = m => svg.getScreenCTM().inverse().multiply(m);
  const boxesOf = (el) => {
    const d = el.tagName === 'path' ? el.getAttribute('d') || '' : '';
    if (el.tagName !== 'path' || /[^MmLlHhVvZz0-9eE.,+\\-\\s]/.test(d)) {
      const b = el.getBBox();
      return [[b.x, b.y, b.x + b.width, b.y + b.height]];
    }
    const boxes = [];
    let x = 0, y = 0, sx = 0, sy = 0, box = null;
    const add = () => { if (box) boxes.push(box); box = null; };
    const at = () => { if (!box) box = [x, y, x, y]; box[0] = Math.min(box[0], x); box[1] = Math.min(box[1], y);
                       box[2] = Math.max(box[2], x); box[3] = Math.max(box[3], y); };
    const tokens = d.match(/[MmLlHhVvZz]|[-+]?(?:\\d*\\.\\d+|\\d+\\.?)(?:[eE][-+]?\\d+)?/g) || [];
    let cmd = null;
    for (let i = 0; i < tokens.length;) {
      if (/[A-Za-z]/.test(tokens[i])) cmd = tokens[i++];
      const n = () => parseFloat(tokens[i++]);
      switch (cmd) {
        case 'M': add(); x = n(); y = n(); sx = x; sy = y; at(); cmd = 'L'; break;
        case 'm': add(); x += n(); y += n(); sx = x; sy = y; at(); cmd = 'l'; break;
        case 'L': x = n(); y = n(); at(); break;
        case 'l': x += n(); y += n(); at(); break;
        case 'H': x = n(); at(); break;
        case 'h': x += n(); at(); break;
        case 'V': y = n(); at(); break;
        case 'v': y += n(); at(); break;
        default: x = sx; y = sy; at(); break;  // Z, z
      }
    }
    add();
    return boxes;
  };
  const shapes = [];
  if (!svg.getClientRects().length) return {background: 'rgb(0, 0, 0)', shapes};  // not drawn (a hidden panel)
  for (const el of svg.querySelectorAll('rect, circle, ellipse, polygon, path')) {
    if (el.closest(SKIP)) continue;
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.visibility !== 'visible' || cs.fill === 'none') continue;
    const alpha = parseFloat(cs.fillOpacity) * parseFloat(cs.opacity);
    const dashed = cs.strokeDasharray && cs.strokeDasharray !== 'none';
    const stroke = cs.stroke !== 'none' && !dashed && parseFloat(cs.strokeWidth) >= 1
      && parseFloat(cs.strokeOpacity) > 0 ? cs.stroke : null;
    const m = toSvg(el.getScreenCTM());
    const boxes = boxesOf(el).map(([x0, y0, x1, y1]) => {
      const a = new DOMPoint(x0, y0).matrixTransform(m), b = new DOMPoint(x1, y1).matrixTransform(m);
      return [Math.min(a.x, b.x), Math.min(a.y, b.y), Math.max(a.x, b.x), Math.max(a.y, b.y)];
    }).filter(([x0, y0, x1, y1]) => x1 - x0 > 0 && y1 - y0 > 0);
    if (alpha > 0 && boxes.length) {
      const what = el.dataset.state || el.dataset.kind || el.dataset.bound || el.getAttribute('class') || '';
      shapes.push({what: el.tagName + (what ? '.' + what : ''), fill: cs.fill, alpha, stroke, boxes});
    }
  }
  let background = 'rgba(0, 0, 0, 0)';
  for (let e = svg; e; e = e.parentElement) {
    const c = getComputedStyle(e).backgroundColor;
    if (!/rgba\\(.*, 0\\)$/.test(c)) { background = c; break; }
  }
  return {background, shapes};
}"""

NUMBERS = re.compile(r"[\d.]+")


def rgba(css: str) -> tuple[float, float, float, float]:
    """A computed colour, rgb() or rgba(), as (r, g, b) in 0–255 and an alpha."""
    assert css.startswith("rgb"), f"not an rgb() colour: {css}"
    values = [float(v) for v in NUMBERS.findall(css)]
    return (*values[:3], values[3] if len(values) > 3 else 1.0)


def over(css: str, background: tuple, alpha: float = 1.0) -> tuple[float, float, float]:
    """The colour `css` paints, at `alpha` times its own, over an opaque background."""
    *rgb, a = rgba(css)
    a *= alpha
    return tuple(c * a + b * (1 - a) for c, b in zip(rgb, background))


def luminance(rgb) -> float:
    def linear(c):
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@functools.cache
def contrast(a, b) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def touch(a, b) -> bool:
    return a[0] < b[2] + TOUCH and b[0] < a[2] + TOUCH and a[1] < b[3] + TOUCH and b[1] < a[3] + TOUCH


def seen(fill_a, fill_b, outlines) -> bool:
    """A boundary between two fills is seen: the fills differ 3:1, or one of the outlines differs 3:1 from both."""
    return contrast(fill_a, fill_b) >= MINIMUM or any(
        contrast(o, fill_a) >= MINIMUM and contrast(o, fill_b) >= MINIMUM for o in outlines)


def faint_boundaries(diagram: dict) -> list[str]:
    """Every boundary in one diagram that is not seen: `what` of each side and their contrast."""
    background = rgba(diagram["background"])[:3]
    shapes = [{**s, "colour": over(s["fill"], background, s["alpha"]),
               "outline": over(s["stroke"], background) if s["stroke"] else None} for s in diagram["shapes"]]
    faint = set()
    for i, a in enumerate(shapes):
        if not seen(a["colour"], background, [a["outline"]] if a["outline"] else []):
            faint.add(f"{a['what']} {diagram['shapes'][i]['fill']} on the background {diagram['background']}: "
                      f"{contrast(a['colour'], background):.2f}:1")
    for i, j in touching_pairs(shapes):
        a, b = shapes[i], shapes[j]
        if not seen(a["colour"], b["colour"], [o for o in (a["outline"], b["outline"]) if o]):
            faint.add(f"{a['what']} {a['fill']} next to {b['what']} {b['fill']}: "
                      f"{contrast(a['colour'], b['colour']):.2f}:1")
    return sorted(faint)


def touching_pairs(shapes: list[dict]) -> set[tuple[int, int]]:
    """Every pair (i < j) of shapes of different colours with boxes that touch. A sweep along x: the boxes in order
    of their left edge, each held against those that start before it ends (a diagram has thousands of cells, and
    the pairs that touch are few)."""
    boxes = sorted((box[0], box, k) for k, shape in enumerate(shapes) for box in shape["boxes"])
    pairs, active = set(), []
    for left, box, k in boxes:
        active = [(end, other, m) for end, other, m in active if end + TOUCH > left]
        for _, other, m in active:
            if m != k and shapes[m]["colour"] != shapes[k]["colour"] and touch(box, other):
                pairs.add((min(m, k), max(m, k)))
        active.append((box[2], box, k))
    return pairs


def faint_in_diagrams(page) -> dict[str, list[str]]:
    """Every faint boundary of every diagram the page shows now, in its present theme: {"WIDGET DIAGRAM #K": [...]}."""
    found = {}
    diagrams = page.locator("[data-svg] svg:visible").all()  # the drawing this width shows
    assert diagrams or "data-svg" not in page.content()
    for k, diagram in enumerate(diagrams):
        where = diagram.evaluate("svg => svg.closest('[data-widget]').id + ' ' + svg.closest('[data-svg]').dataset.svg")
        faint = faint_boundaries(diagram.evaluate(SHAPES))
        if faint:
            found[f"{where} #{k}"] = faint
    return found


def faint_on_page(page, url: str) -> dict[str, list[str]]:
    """Every faint boundary of every diagram at `url`, in each theme: {"THEME WIDGET DIAGRAM #K": [...]}."""
    found = {}
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        open_all_ready(page, url)
        assert page.evaluate("document.documentElement.dataset.theme") == theme
        found |= {f"{theme} {where}": faint for where, faint in faint_in_diagrams(page).items()}
    return found


def report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{where}:\n  " + "\n  ".join(lines) for where, lines in found.items())


# Diagrams the lessons' settings do not draw, each with the element that shows it is drawn: the KV pool paged, with
# free blocks, a shared prefix and parallel samples (the block table and copy-on-write pictures); a GPU's memory
# with a reserved share and a batch over it.
SCENARIOS = [
    ("kv-cache-serving", "kv-blocks.policy=paged&kv-blocks.prefix_tokens=300&kv-blocks.samples=3",
     ('[data-svg="cow"] svg [data-kind="shared"]', '[data-svg="map"] [data-state="free"]')),
    ("inference-vs-training", "kv-capacity.memory_fraction=0.9&kv-capacity.batch=32", ('[data-kind="reserved"]', '[data-kind="free"]')),
    ("inference-vs-training", "kv-capacity.memory_fraction=0.9&kv-capacity.batch=200", ('[data-kind="over"]',)),
]


@pytest.mark.parametrize("lesson, query, drawn", [
    pytest.param(lesson, query, drawn, id=f"{lesson.lang}/{lesson.slug}?{query}", marks=pytest.mark.lesson(lesson.slug))
    for slug, query, drawn in SCENARIOS for lesson in LESSONS if lesson.slug == slug and lesson.lang == "en"])
def test_diagrams_the_lessons_do_not_open_with_stand_out_too(site_page, server, lesson, query, drawn):
    found = faint_on_page(site_page, server.url(urls.page(lesson.lang, lesson.slug)) + "?" + query)
    for selector in drawn:
        assert site_page.locator(selector).count(), f"the scenario draws {selector}"
    assert not found, report(found)
