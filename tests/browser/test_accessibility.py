"""What a screen reader and a keyboard get beyond what axe-core checks (test_lessons.py runs axe on every page):
plots that state their numbers, readouts announced once an input settles, wide frames that become named regions
a keyboard can scroll."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import cpython_view, open_ready, show_figures, wait_for_output

PHONE = {"width": 375, "height": 812}
SMALL_PHONE = {"width": 320, "height": 640}


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
    # On a 375 px phone every diagram, table and formula has a layout that fits; on a 320 px one the phase table
    # (three columns, which do not stack) is still wider than the screen.
    # A lesson's parts are laid out near the screen only (.lesson-part): a keyboard user's first Tab lays out all.
    site_page.set_viewport_size(SMALL_PHONE)
    site_page.goto(server.url("inference-vs-training/"))
    last_part = site_page.locator(".lesson-part").last
    assert not last_part.evaluate("p => p.firstElementChild.checkVisibility({contentVisibilityAuto: true})")
    site_page.keyboard.press("Tab")
    expect(last_part.locator(":scope > *").first).to_be_visible()
    site_page.wait_for_function(f"() => ({FRAMES})().some(f => f.overflowing && f.focusable)")
    frames = site_page.evaluate(FRAMES)
    assert any(f["overflowing"] for f in frames) and any(not f["overflowing"] for f in frames)
    for frame in frames:
        if frame["overflowing"]:
            assert frame["focusable"] and frame["named"] and frame["more"] == "right", frame
        else:
            assert not frame["focusable"] and frame["more"] == "", frame
