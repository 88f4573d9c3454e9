"""axe-core finds no violation on any page: each language, both themes, desktop and phone width; at a phone's
width no page scrolls sideways and no diagram's text is drawn below 11 px.

axe-core comes from npm (package.json) and is injected into the real built site; the context bypasses the
page's Content-Security-Policy only so that the injected script may run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import READY_TIMEOUT_MS, cpython_view, open_ready, show_figures, wait_for_output

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
PAGES = ("", "prefill-decode/", "inference-vs-training/", "kv-cache-serving/", "en/", "en/prefill-decode/",
         "en/inference-vs-training/", "en/kv-cache-serving/")
WIDTHS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 375, "height": 812}}
# WCAG 2.2 A and AA, and axe's best practices (landmarks, headings, regions) as well.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


def violations(page) -> list[str]:
    result = page.evaluate("tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", TAGS)
    return [f"{v['id']} ({v['impact']}): {v['help']} — " + "; ".join(
        " ".join(node["target"]) + (f" [{node['failureSummary'].splitlines()[-1].strip()}]" if node.get("failureSummary") else "")
        for node in v["nodes"][:6]) for v in result["violations"]]


def open_page(browser, server, path: str, viewport: dict, scheme: str):
    context = browser.new_context(viewport=viewport, bypass_csp=True, color_scheme=scheme)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.origin + "/" + path)
    widgets = page.locator("[data-widget]")
    for i in range(widgets.count()):
        page.wait_for_selector(f'[data-widget] >> nth={i} >> xpath=self::*[@data-state="ready"]',
                               timeout=READY_TIMEOUT_MS)
    for i in range(widgets.count()):
        if widgets.nth(i).locator("[data-figure]").count():
            show_figures(widgets.nth(i))
    page.add_script_tag(path=str(AXE))
    return context, page, errors


# The smallest text in any diagram or plot, in CSS pixels as drawn: an SVG's own units scaled to its drawn width.
SMALLEST_TEXT = """() => {
  let smallest = Infinity, where = "";
  for (const text of document.querySelectorAll("svg text")) {
    const svg = text.ownerSVGElement, box = svg.getBoundingClientRect();
    if (box.width === 0 || !text.textContent.trim()) continue;
    const scale = svg.viewBox.baseVal && svg.viewBox.baseVal.width ? box.width / svg.viewBox.baseVal.width : 1;
    const px = parseFloat(getComputedStyle(text).fontSize) * scale;
    if (px < smallest) { smallest = px; where = text.textContent; }
  }
  return [smallest, where];
}"""


def check_fits_a_phone(page) -> None:
    """No sideways scroll of the page; every diagram's and plot's text at least 11 px."""
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    smallest, where = page.evaluate(SMALLEST_TEXT)
    assert smallest >= 10.95, f"text {where!r} drawn at {smallest:.1f} px"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_every_page_passes_axe_and_fits_a_phone(browser, server, path, width):
    context, page, errors = open_page(browser, server, path, WIDTHS[width], "light")
    try:
        if width == "phone":
            check_fits_a_phone(page)
        found = {"light": violations(page)}
        page.emulate_media(color_scheme="dark")  # no stored choice: the page follows the system, live
        page.wait_for_function("document.documentElement.dataset.theme === 'dark'")
        page.wait_for_timeout(300)  # plots are drawn again in the dark colours
        found["dark"] = violations(page)
        assert found == {"light": [], "dark": []}, json.dumps(found, indent=1, ensure_ascii=False)
        assert errors == []
    finally:
        context.close()


def test_plots_state_their_numbers_and_readouts_are_announced_once_the_input_settles(site_page, server):
    widget = open_ready(site_page, server.origin + "/en/prefill-decode/")
    show_figures(widget)
    plot = widget.locator('[data-figure="roofline"]')
    state = site_page.evaluate("window.inferlab.widgets.find(w => w.id === 'roofline').initial")  # the lesson's
    expected = cpython_view("roofline", state)["figures"]["roofline"]["alt"]
    expect(plot).to_have_attribute("aria-label", expected)
    assert "TFLOP/s" in expected and "FLOP/B" in expected
    # Outputs are not live regions; the announcer is, and says the readouts once, after the input settles.
    assert widget.locator('output[aria-live="off"]').count() == widget.locator("output").count() > 0
    site_page.evaluate("""() => { window.announced = [];
        const node = document.querySelector('#roofline .widget-announce');
        new MutationObserver(() => window.announced.push(node.textContent))
          .observe(node, {childList: true, characterData: true, subtree: true}); }""")
    box = widget.locator('input[type="number"][name="B"]')
    for batch in ("8", "16", "32"):  # three quick changes, as a drag makes
        box.fill(batch)
        box.press("Enter")
    after = cpython_view("roofline", {**state, "B": 32})
    wait_for_output(widget, "decode_ms", after["outputs"]["decode_ms"]["value"])
    new = after["figures"]["roofline"]["alt"]
    expect(plot).to_have_attribute("aria-label", new)
    site_page.wait_for_function("() => window.announced.length > 0")
    site_page.wait_for_timeout(1200)
    announced = site_page.evaluate("window.announced")
    assert len(announced) == 1, announced
    assert after["outputs"]["decode_ms"]["text"] in announced[0]


FRAMES = """() => [...document.querySelectorAll('[data-scroll]')].filter(box => box.getClientRects().length).map(box => ({
  overflowing: box.scrollWidth > box.clientWidth + 1, focusable: box.tabIndex === 0 && box.getAttribute('role') === 'region',
  named: box.getAttribute('aria-label') === box.dataset.label, more: box.parentElement.dataset.more ?? ''}))"""


def test_a_frame_wider_than_a_phone_becomes_a_named_region_a_keyboard_can_scroll(site_page, server):
    # Set from the frames' first ResizeObserver report (the page script reads no layout as it starts).
    site_page.set_viewport_size(WIDTHS["phone"])
    site_page.goto(server.url("prefill-decode/"))
    site_page.wait_for_function(f"() => ({FRAMES})().some(f => f.overflowing && f.focusable)")
    frames = site_page.evaluate(FRAMES)
    assert any(f["overflowing"] for f in frames) and any(not f["overflowing"] for f in frames)
    for frame in frames:
        if frame["overflowing"]:
            assert frame["focusable"] and frame["named"] and frame["more"] == "right", frame
        else:
            assert not frame["focusable"] and frame["more"] == "", frame
