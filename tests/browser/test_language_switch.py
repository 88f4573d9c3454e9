"""The language switch: a link to the same lesson in the other language that keeps the reader's scenario (the
widgets' URL state) and the section being read, both ways."""

import re

from playwright.sync_api import expect

from tests.browser.conftest import READY_TIMEOUT_MS, open_ready


def read_at(page, section_id: str) -> None:
    """Scroll so that a section's heading sits at the top of the screen, as a reader who got there would."""
    page.evaluate(f"document.getElementById({section_id!r}).scrollIntoView({{block: 'start'}})")


def test_the_switch_keeps_the_scenario_and_the_section(site_page, server):
    open_ready(site_page, server.url("prefill-decode/?roofline.T=2048&roofline.B=58"))
    read_at(site_page, "gemm-gemv")
    site_page.locator("a[data-language-switch][hreflang='en']").click()
    expect(site_page).to_have_url(re.compile(r"/en/prefill-decode/\?roofline\.T=2048&roofline\.B=58#gemm-gemv$"))
    expect(site_page.locator("html")).to_have_attribute("lang", "en")
    roofline = site_page.locator("#roofline")
    expect(roofline).to_have_attribute("data-state", "ready", timeout=READY_TIMEOUT_MS)
    expect(roofline.locator('input[name="T"]')).to_have_value("2048")
    expect(roofline.locator('input[name="B"]')).to_have_value("58")
    # And back, from another section and a scenario changed on the English page.
    roofline.locator('input[name="B"]').fill("16")
    expect(site_page).to_have_url(re.compile(r"roofline\.B=16"))
    read_at(site_page, "misconceptions")
    site_page.locator("a[data-language-switch][hreflang='zh']").click()
    expect(site_page).to_have_url(re.compile(r"/prefill-decode/\?roofline\.T=2048&roofline\.B=16#misconceptions$"))
    expect(site_page.locator("html")).to_have_attribute("lang", "zh")


def test_without_a_scenario_the_switch_is_a_plain_link_between_home_pages(site_page, server):
    site_page.goto(server.url(""))
    site_page.locator("a[data-language-switch]").click()
    expect(site_page).to_have_url(re.compile(r"/en/$"))
    expect(site_page.locator("h1")).not_to_be_empty()
    site_page.locator("a[data-language-switch]").click()
    expect(site_page).to_have_url(re.compile(r"/[^/]*/?$"))
    expect(site_page.locator("html")).to_have_attribute("lang", "zh")
