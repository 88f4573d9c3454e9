"""A widget used on a 375 px phone: while one of its controls has focus, and after the control moves, the readouts
it moves are in sight (static/js/dock.js: in place, or in the strip at the bottom of the screen), below the
sticky header and above nothing that hides them; the focused control stays in sight above the strip; nothing
scrolls sideways. The header is one row. A wide screen never shows the strip.

Run on the tallest widgets (1,700-4,300 px at 375 px before the strip), in both languages for the three the
issue named (#48: slo-serving, spec-decode, quant-roofline).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import open_all_ready

PHONE = {"width": 375, "height": 812}
HEADER_MAX_PX = 48
FIRST = 4  # the readouts the strip stands in with before a control's first move (dock.js FIRST)

# (page, widget id, control moved by one step: a slider or a row of buttons (from its checked one) with ArrowRight,
# a menu with ArrowDown)
CASES = [
    ("en/pd-disaggregation/", "slo-serving", "rate"),
    ("en/speculative-decoding/", "spec", "batch"),
    ("en/speculative-decoding/", "spec", "hardware"),  # every readout moves
    ("en/quantization/", "quant", "context"),
    ("pd-disaggregation/", "slo-serving", "policy"),
    ("speculative-decoding/", "spec", "alpha"),
    ("quantization/", "quant", "batch"),
    ("en/kv-cache-serving/", "kv-blocks", "samples"),
    ("en/kv-cache-serving/", "batching-timeline", "rate"),
    ("en/inference-vs-training/", "batch-throughput", "context"),
]

# Each readout's outputs' texts, by output name (the strip's copies left out).
OUTPUTS = """(id) => Object.fromEntries([...document.getElementById(id).querySelectorAll('[data-announce] output')]
  .map(o => [o.name, o.textContent]))"""

# Where the student sees each named readout: 'place' (whole, between the header and the strip or the screen's
# bottom), 'strip' (its entry whole in the shown strip, on screen) or null; and the focused control's box, the
# strip's and the header's.
SEEN = """([id, names]) => {
  const section = document.getElementById(id);
  const header = document.querySelector('.site-header').getBoundingClientRect();
  const strip = section.querySelector('.readout-dock');
  const shown = strip && strip.checkVisibility();
  const stripBox = shown ? strip.getBoundingClientRect() : null;
  const floor = shown ? stripBox.top : innerHeight;
  const whole = (box, top, bottom) => box.height > 0 && box.top >= top - 1 && box.bottom <= bottom + 1;
  const seen = {};
  for (const name of names) {
    const readout = section.querySelector(`[data-announce] output[name="${name}"]`).closest('[data-announce]');
    const entry = shown ? [...strip.children].find(e => e.dataset.for.split(' ').includes(name)) : null;
    seen[name] = whole(readout.getBoundingClientRect(), header.bottom, floor) ? 'place'
      : entry && whole(entry.getBoundingClientRect(), header.bottom, innerHeight) && stripBox.top >= header.bottom
        ? 'strip' : null;
  }
  const control = document.activeElement.closest('[data-param]').getBoundingClientRect();
  return {seen, shown, header: header.bottom, control: [control.top, control.bottom], floor,
          entries: shown ? strip.children.length : 0, scrollWidth: document.documentElement.scrollWidth};
}"""

MOVED = """([id, param, before]) => {
  const section = document.getElementById(id);
  const view = window.inferlab.views[id];
  return view !== undefined && String(view.state[param]) !== before
    && !section.hasAttribute('data-busy') && !section.hasAttribute('data-pending');
}"""


def in_sight(page, widget_id: str, names: list[str]) -> dict:
    """SEEN after the page has drawn twice (the strip is placed on the frame after a scroll)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return page.evaluate(SEEN, [widget_id, names])


def assert_in_sight(found: dict, what: str) -> None:
    missing = [name for name, where in found["seen"].items() if where is None]
    assert not missing, f"{what}: out of sight: {missing} ({found})"
    top, bottom = found["control"]
    assert top >= found["header"] - 1 and bottom <= found["floor"] + 1, f"{what}: the focused control is hidden: {found}"
    assert found["scrollWidth"] <= PHONE["width"], f"{what}: the page scrolls sideways ({found['scrollWidth']} px)"


@pytest.mark.parametrize(("path", "widget_id", "param"), [
    pytest.param(path, widget_id, param, id=f"{path.strip('/')}/{widget_id}/{param}",
                 marks=pytest.mark.lesson(path.strip("/").split("/")[-1]))
    for path, widget_id, param in CASES])
def test_a_control_in_use_on_a_phone_keeps_the_readouts_it_moves_in_sight(site_page, server, path, widget_id, param):
    site_page.set_viewport_size(PHONE)
    open_all_ready(site_page, server.url(path))
    widget = site_page.locator(f"#{widget_id}")
    control = widget.locator(f'[data-param="{param}"]')
    control.locator('input[type="range"], input[type="radio"]:checked, select').focus()
    names = list(site_page.evaluate(OUTPUTS, widget_id))
    focused = in_sight(site_page, widget_id, names[:FIRST])
    assert_in_sight(focused, f"{param} focused")
    # a control a screen or more above the readouts: they are seen in the strip
    far = site_page.evaluate("""([id, param]) => { const s = document.getElementById(id);
      return s.querySelector('[data-announce]').getBoundingClientRect().top
        - s.querySelector(`[data-param="${param}"]`).getBoundingClientRect().bottom > innerHeight; }""",
                             [widget_id, param])
    if far:
        assert set(focused["seen"].values()) == {"strip"}, f"{param} focused: {focused}"

    before_value = control.locator('input[type="number"], input:checked, select').input_value()
    before = site_page.evaluate(OUTPUTS, widget_id)
    site_page.keyboard.press("ArrowDown" if control.locator("select").count() else "ArrowRight")
    site_page.wait_for_function(MOVED, arg=[widget_id, param, before_value], timeout=90_000)
    after = site_page.evaluate(OUTPUTS, widget_id)
    moved = [name for name in after if after[name] != before[name]]
    assert moved, f"moving {param} changed no readout"
    found = in_sight(site_page, widget_id, moved)
    assert_in_sight(found, f"{param} moved")
    if far:
        assert "strip" in found["seen"].values(), f"{param} moved: {found}"
    assert site_page.evaluate("document.activeElement.closest('[data-param]')?.dataset.param") == param

    # Keyboard use is unchanged: the strip is not in the focus order nor in the accessibility tree, Tab goes on to
    # the next input (Shift+Tab back from the last control), which stays above the strip; focus leaving the controls
    # puts the strip away.
    strip = widget.locator(".readout-dock")
    assert strip.get_attribute("aria-hidden") == "true"
    assert strip.locator("a, button, input, select, [tabindex]").count() == 0
    site_page.evaluate("window.before = document.activeElement")
    last = widget.locator(".controls [data-param]").last.get_attribute("data-param") == param
    site_page.keyboard.press("Shift+Tab" if last else "Tab")
    assert site_page.evaluate(f"""document.activeElement !== window.before
      && document.activeElement.closest('#{widget_id} .controls [data-param]') !== null""")
    assert in_sight(site_page, widget_id, [])["control"][1] <= in_sight(site_page, widget_id, [])["floor"] + 1
    site_page.locator("main").focus()
    expect(strip).to_be_hidden()


@pytest.mark.lesson("speculative-decoding")
def test_a_wide_screen_never_shows_the_strip(site_page, server):
    site_page.set_viewport_size({"width": 1280, "height": 800})
    open_all_ready(site_page, server.url("en/speculative-decoding/"))
    widget = site_page.locator("#spec")
    widget.locator('[data-param="batch"] input[type="range"]').focus()
    site_page.keyboard.press("ArrowRight")
    site_page.wait_for_function(MOVED, arg=["spec", "batch", "1"], timeout=60_000)
    expect(widget.locator(".readout-dock")).not_to_be_visible()
    # and it takes no room: the widget is as tall as it would be without it (the move itself may change the height)
    with_dock = widget.bounding_box()["height"]
    site_page.evaluate("document.querySelectorAll('.readout-dock-anchor').forEach(a => a.remove())")
    assert widget.bounding_box()["height"] == with_dock


@pytest.mark.parametrize("path", ["", "en/", "pd-disaggregation/", "en/speculative-decoding/"])
def test_the_header_is_one_row_on_a_phone(site_page, server, path):
    site_page.set_viewport_size(PHONE)
    site_page.goto(server.url(path))
    header = site_page.locator(".site-header")
    expect(header.locator("[data-search]")).to_have_attribute("data-ready", "")
    expect(header.locator("[data-theme-toggle]")).to_be_visible()
    box = header.bounding_box()
    assert box["height"] <= HEADER_MAX_PX, f"the header is {box['height']} px tall"
    # every part of it on the one row, inside the screen
    parts = site_page.evaluate("""() => [...document.querySelectorAll('.site-header > *')]
      .filter(e => e.checkVisibility()).map(e => { const b = e.getBoundingClientRect();
        return [e.className, b.top, b.bottom, b.left, b.right]; })""")
    for name, top, bottom, left, right in parts:
        assert box["y"] <= top and bottom <= box["y"] + box["height"], f"{name} is off the header's row"
        assert 0 <= left and right <= PHONE["width"], f"{name} runs off the screen"
    # the toggle is a symbol on a phone, still named by its words
    words = "Dark mode" if path.startswith("en/") else "深色模式"
    expect(site_page.get_by_role("button", name=words)).to_be_visible()
    assert site_page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


@pytest.mark.lesson("quantization")
def test_a_tap_near_the_bottom_of_the_screen_lands_and_the_control_then_shows_above_the_strip(site_page, server):
    site_page.set_viewport_size(PHONE)
    open_all_ready(site_page, server.url("en/quantization/"))
    widget = site_page.locator("#quant")
    button = widget.locator('input[data-name="weights"][value="fp8"]')
    label = button.locator("xpath=..")
    # the button's row 40 px above the bottom of the screen, where the strip will appear
    site_page.evaluate("""(el) => scrollBy(0, el.getBoundingClientRect().top - (innerHeight - 40))""",
                       label.element_handle())
    box = label.bounding_box()
    site_page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    site_page.mouse.down()
    site_page.wait_for_timeout(150)  # a finger's tap: the strip appears meanwhile
    assert widget.locator(".readout-dock").is_visible()
    site_page.mouse.up()
    expect(button).to_be_checked()  # the page did not scroll between the press and the release
    site_page.wait_for_function(MOVED, arg=["quant", "weights", "int4"], timeout=60_000)
    found = in_sight(site_page, "quant", [])
    if found["shown"]:
        assert found["control"][1] <= found["floor"] + 1, f"the tapped control is under the strip: {found}"
