"""Lesson prefill-decode: the parts that are not widgets (formula terms, evolution map, links, dig-deeper)."""

from pathlib import Path

import pytest
import yaml
from playwright.sync_api import expect

from tests.browser.conftest import cpython_view, open_ready

# The evolution map's steps, which every lesson's page shows (lessons/zh/evolution.yml)
MAP = yaml.safe_load((Path(__file__).resolve().parents[2] / "lessons/zh/evolution.yml").read_text("utf-8"))["items"]

LESSON = "prefill-decode/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))


def roofline_view(page, **changes) -> dict:
    state = page.evaluate("JSON.parse(document.querySelector('#roofline script.widget-data').textContent).state")
    return cpython_view("roofline", {**state, **changes})


def test_formula_terms_explain_themselves_from_the_keyboard(site_page, server):
    open_ready(site_page, server.url(LESSON))
    formula = site_page.locator("figure.formula").first
    panel = formula.locator(".term-panel")
    expect(panel).to_be_hidden()
    # The keyboard's way in: the term's button beside the formula (the term in the MathML is clicked).
    button = formula.locator('[data-term-button="bandwidth"]')
    button.focus()
    site_page.keyboard.press("Enter")
    expect(panel).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(formula.locator('[data-term="bandwidth"]')).to_have_class("term active")
    expect(panel).to_contain_text("显存带宽")
    expect(panel.locator(".term-value")).to_contain_text(roofline_view(site_page)["outputs"]["bandwidth"]["text"])
    control = site_page.locator('#roofline [data-param="hardware"]')
    expect(control).to_have_class("control control-select term-highlight")
    # The value follows the widget: switch the GPU and the open panel updates.
    site_page.locator('#roofline select[name="hardware"]').select_option("h200-sxm")
    expect(panel.locator(".term-value")).to_contain_text("4.8 TB/s")
    # Another term replaces it; Escape closes.
    formula.locator('[data-term="intensity"]').click()
    expect(panel).to_contain_text("算术强度")
    expect(control).not_to_have_class("term-highlight")
    expect(button).to_have_attribute("aria-expanded", "false")
    formula.locator('[data-term-button="intensity"]').focus()
    site_page.keyboard.press("Escape")
    expect(panel).to_be_hidden()


def test_every_term_in_the_formula_has_a_value(site_page, server):
    open_ready(site_page, server.url(LESSON))
    terms = site_page.locator("figure.formula [data-term]")
    assert terms.count() >= 5
    for i in range(terms.count()):
        terms.nth(i).click()
        value = site_page.locator("figure.formula .term-panel .term-value").first
        expect(value).not_to_contain_text("没有关联")


def test_evolution_map_marks_this_lesson_and_links_the_others(site_page, server):
    site_page.goto(server.url(LESSON))
    generations = site_page.locator("ol.evolution > li")
    items = len(MAP)
    assert generations.count() == items
    here = site_page.locator("ol.evolution > li.here")
    expect(here).to_have_count(1)
    expect(here).to_contain_text("你在这里")
    # every lesson of the course is written: no generation is marked upcoming, and each one with a lesson other
    # than this one links to it (the first, "feed the whole sequence back in", has none)
    expect(site_page.locator("ol.evolution > li.upcoming")).to_have_count(0)
    assert site_page.locator("ol.evolution a.generation-name").count() == items - 2  # this lesson and the first
    expect(site_page.locator('ol.evolution a.generation-name[href="../sampling/"]')).to_have_count(1)


def test_dig_deeper_and_questions_expand(site_page, server):
    site_page.goto(server.url(LESSON))
    digs = site_page.locator("details.dig")
    assert digs.count() >= 8  # two dig-deeper sections and at least six questions
    first = digs.first
    expect(first.locator("p").first).to_be_hidden()
    first.locator("summary").click()
    expect(first.locator("p").first).to_be_visible()


def test_next_gap_links_to_written_lessons(site_page, server, built_site):
    site_page.goto(server.url(LESSON))
    links = site_page.locator("main a[href]")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    for href in hrefs:
        if href.startswith("../") and not href.startswith("../static"):
            slug = href[3:].split("/")[0]
            assert (built_site / slug / "index.html").exists(), href
    assert site_page.locator(".upcoming-link").count() == 0  # every lesson of the course is written
    assert "../sampling/" in hrefs  # the next gap's lesson


def test_misconceptions_are_refuted_with_computed_numbers(site_page, server):
    site_page.goto(server.url(LESSON))
    boxes = site_page.locator(".callout-misconception")
    assert boxes.count() >= 4
    for i in range(boxes.count()):
        assert boxes.nth(i).locator(".sim-value").count() >= 1, boxes.nth(i).inner_text()


def test_closing_parts_are_all_there(site_page, server):
    site_page.goto(server.url(LESSON))
    evidence = site_page.locator("#evidence ~ .scroll-frame table").first
    expect(evidence.locator("tbody tr")).to_have_count(3)
    expect(site_page.locator(".callout-summary")).to_have_count(1)
    expect(site_page.locator(".callout-stop")).to_have_count(1)
    faq = site_page.locator("#faq ~ details.dig")
    assert faq.count() >= 6
    # Text only: no widget, formula or computed number is left unrendered.
    assert "{sim}" not in site_page.content()


def test_the_design_section_asks_for_an_estimate_before_revealing_it(site_page, server):
    from sim.questions import QUESTIONS

    open_ready(site_page, server.url(LESSON), widget="q-speed")
    # The box comes first in the section: before the estimates' prose and before the stepper shows them.
    order = site_page.evaluate("""() => {
        const design = document.getElementById('design');
        const box = document.getElementById('q-speed');
        const stepper = document.getElementById('estimate-stepper');
        const prose = [...document.querySelectorAll('h3')].find(h => h.textContent.includes('估法一'));
        const after = (a, b) => !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
        return [after(design, box), after(box, prose), after(box, stepper)];
    }""")
    assert order == [True, True, True]
    box = site_page.locator("#q-speed")
    expect(box.locator('[data-flag="answered"]')).to_be_hidden()  # nothing of the answer shows before a guess
    question = QUESTIONS["decode-speed-anchor-h100"]
    # The compute-only estimate is a named mistake: the feedback says what it forgot.
    naive = question.mistake_values()[0]
    box.locator('input[name="guess"]').fill(f"{naive:.0f}")
    box.locator("button.commit").click()
    expect(box.locator('output[name="verdict"]')).to_have_text(question.grade(round(naive), "zh").feedback)
    assert box.locator('[data-flag="mistake"]').evaluate("el => el.hidden") is False
    expect(box.locator('[data-flag="answered"]')).to_be_visible()
    # A byte-counting estimate is right.
    box.locator('input[name="guess"]').fill("65")
    box.locator("button.commit").click()
    right = cpython_view("predict", {"question": question.key, "guess": 65})
    assert right["flags"]["correct"]
    expect(box.locator('output[name="verdict"]')).to_have_text(right["outputs"]["verdict"]["text"])
    assert box.locator('[data-flag="mistake"]').evaluate("el => el.hidden") is True
    assert box.locator('[data-flag="correct"]').evaluate("el => el.hidden") is False
