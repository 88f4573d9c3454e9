"""Finding one's way and keeping one's settings: the theme toggle, the contents list, previous and next lesson, the
evolution map every lesson shows, the course's end, copying a scenario's link, the way back from a formula term's
control, the skip link, and print."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import yaml
from playwright.sync_api import expect

from tests.browser.conftest import open_ready, show_figures


def theme_at_first_paint(page) -> None:
    """Record <html data-theme> as it is when <body> first appears, before anything is drawn."""
    page.add_init_script("""
      new MutationObserver((_, observer) => {
        if (!document.body) return;
        window.themeAtBody = document.documentElement.dataset.theme ?? null;
        observer.disconnect();
      }).observe(document, {childList: true, subtree: true});
    """)


def test_theme_toggle_is_kept_across_pages_and_reloads_without_a_flash(site_page, server):
    theme_at_first_paint(site_page)
    site_page.emulate_media(color_scheme="light")
    widget = open_ready(site_page, server.origin + "/prefill-decode/")
    show_figures(widget)
    toggle = site_page.locator("[data-theme-toggle]")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    assert site_page.evaluate("window.themeAtBody") == "light"
    light_paper = site_page.evaluate("document.querySelector('#roofline .js-plotly-plot')._fullLayout.paper_bgcolor")

    toggle.click()
    expect(site_page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    # The plot is drawn again in the dark theme's colours, not inverted.
    dark_surface = site_page.evaluate("""(() => { const s = document.createElement('span');
        s.style.color = 'var(--sim-surface)'; document.body.append(s);
        const c = getComputedStyle(s).color; s.remove(); return c; })()""")
    expect(site_page.locator("#roofline .main-svg").first).to_be_visible()
    site_page.wait_for_function(
        "c => document.querySelector('#roofline .js-plotly-plot')._fullLayout.paper_bgcolor === c", arg=dark_surface)
    assert dark_surface != light_paper
    assert site_page.evaluate("getComputedStyle(document.body).backgroundColor") == dark_surface

    site_page.goto(server.origin + "/en/")  # another page: the choice holds from the first paint
    assert site_page.evaluate("window.themeAtBody") == "dark"
    site_page.reload()
    assert site_page.evaluate("window.themeAtBody") == "dark"
    site_page.locator("[data-theme-toggle]").click()
    site_page.reload()
    assert site_page.evaluate("window.themeAtBody") == "light"


def test_contents_list_links_every_section_beside_the_text_and_folds_on_a_phone(site_page, server):
    for path in ("/prefill-decode/", "/en/inference-vs-training/"):
        site_page.set_viewport_size({"width": 1400, "height": 900})
        site_page.goto(server.origin + path)
        nav = site_page.locator("nav.contents")
        sections = site_page.locator("article.lesson h2[id]")
        links = nav.locator("a")
        assert links.count() == sections.count() > 5
        for i in range(sections.count()):
            assert links.nth(i).get_attribute("href") == "#" + sections.nth(i).get_attribute("id")
        expect(links.first).to_be_visible()  # open beside the text without a click
        article = site_page.locator("article.lesson").bounding_box()
        assert nav.bounding_box()["x"] + nav.bounding_box()["width"] <= article["x"]
        site_page.mouse.wheel(0, 6000)  # it stays in view while the student reads on
        expect(links.first).to_be_in_viewport()
        links.nth(3).click()
        expect(sections.nth(3)).to_be_in_viewport()

        site_page.set_viewport_size({"width": 375, "height": 812})
        site_page.goto(server.origin + path)
        expect(links.first).to_be_hidden()  # folded above the text
        nav.locator("summary").click()
        expect(links.first).to_be_visible()


def test_a_wrapped_contents_entry_has_its_number_beside_its_first_line(site_page, server):
    """The list marker sits on the first line box of its item. A link that is an inline-block makes that line box
    the whole wrapped link, whose baseline is its last line; as a block, the first line is the link's first line."""
    site_page.set_viewport_size({"width": 1400, "height": 900})
    site_page.goto(server.origin + "/en/kv-cache-serving/")
    lines = site_page.evaluate("""() => [...document.querySelectorAll('nav.contents li')].map((li) => {
        const a = li.querySelector('a');
        const range = document.createRange();
        range.selectNodeContents(a);
        const rects = [...range.getClientRects()];
        return {wrapped: new Set(rects.map((r) => Math.round(r.top))).size > 1,
                display: getComputedStyle(a).display};
    })""")
    assert any(line["wrapped"] for line in lines)  # the case the rule is for occurs on the page
    assert all(line["display"] == "block" for line in lines)


# The written lessons in the course plan's order (lessons/course.yml): those with a page in both languages.
_LESSONS = Path(__file__).resolve().parents[2] / "lessons"
WRITTEN = tuple(slug for chapter in yaml.safe_load((_LESSONS / "course.yml").read_text("utf-8"))
                for slug in chapter["lessons"]
                if all((_LESSONS / lang / f"{slug}.md").exists() for lang in ("zh", "en")))


def test_previous_and_next_lesson_links_lead_to_the_neighbouring_lessons(site_page, server):
    """A click on next, then on previous twice, lands on each neighbour: the first lesson has no previous, the last
    no next. (Every page's links, in every language, are checked on the built site: tests/builder/
    test_evolution_maps.py, as is every page's evolution map.)"""
    site_page.goto(f"{server.origin}/en/{WRITTEN[1]}/")
    site_page.locator('a[rel="next"]').click()
    expect(site_page).to_have_url(f"{server.origin}/en/{WRITTEN[2]}/")
    for lesson in (WRITTEN[1], WRITTEN[0]):
        site_page.locator('a[rel="prev"]').click()
        expect(site_page).to_have_url(f"{server.origin}/en/{lesson}/")
    expect(site_page.locator('a[rel="prev"]')).to_have_count(0)
    site_page.goto(f"{server.origin}/{WRITTEN[-1]}/")
    expect(site_page.locator('a[rel="next"]')).to_have_count(0)  # the last lesson of the course


def test_the_last_lesson_ends_the_course_instead_of_pointing_back(site_page, server):
    for lang, words in (("", "第二章"), ("en/", "second chapter")):
        site_page.goto(f"{server.origin}/{lang}{WRITTEN[-1]}/")
        end = site_page.locator("section.lesson-part", has=site_page.locator("h2#course-end"))
        expect(end).to_contain_text(words)  # what comes next: the second chapter, planned
        assert "→" not in end.text_content()  # no teaser of a next lesson
        back = end.locator('a[href^="../"]').evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert all(href.split("/")[1] in WRITTEN[:-1] for href in back), back  # any link leads back, not on
        assert site_page.locator("h2#next").count() == 0


def test_copy_link_copies_the_current_scenario_and_says_so(site_page, server):
    site_page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    widget = open_ready(site_page, server.origin + "/en/prefill-decode/")
    number = widget.locator('input[type="number"][name="T"]')
    number.fill("777")
    number.press("Enter")
    expect(widget.locator('output[name="prefill_intensity"]').first).not_to_have_text(re.compile("2,053"))
    button = widget.locator("[data-copy-link]")
    expect(button).to_be_visible()
    button.click()
    expect(widget.locator(".copy-status")).to_have_text("Link copied")
    link = site_page.evaluate("navigator.clipboard.readText()")
    parts = urlsplit(link)
    assert parts.fragment == "roofline"
    assert parse_qs(parts.query)["roofline.T"] == ["777"]
    site_page.goto(link)
    expect(site_page.locator('#roofline input[type="number"][name="T"]')).to_have_value("777")
    expect(site_page.locator("#roofline")).to_be_in_viewport()


def test_after_jumping_to_a_control_the_student_can_go_back_to_the_formula(site_page, server):
    open_ready(site_page, server.origin + "/prefill-decode/")
    term = site_page.locator('figure.formula [data-term="bandwidth"]')
    term.click()
    site_page.locator(".term-go").click()
    control = site_page.locator("#roofline .term-highlight")
    expect(control).to_be_in_viewport()
    expect(term).not_to_be_in_viewport()
    back = control.locator(".term-back")
    back.click()
    expect(term).to_be_in_viewport()
    expect(site_page.locator('figure.formula [data-term-button="bandwidth"]')).to_be_focused()
    expect(back).to_have_count(0)


def test_skip_link_is_the_first_stop_and_moves_to_the_lesson(site_page, server):
    site_page.goto(server.origin + "/en/prefill-decode/")
    site_page.keyboard.press("Tab")
    skip = site_page.locator(".skip-link")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    site_page.keyboard.press("Enter")
    expect(site_page.locator("main")).to_be_focused()


def test_print_shows_every_widget_as_it_stands_without_controls_or_navigation(site_page, server):
    open_ready(site_page, server.origin + "/prefill-decode/")
    site_page.emulate_media(media="print")
    figures = site_page.locator("[data-figure]")
    expect(site_page.locator("[data-figure] .main-svg").first).to_be_attached()
    for i in range(figures.count()):  # plots never scrolled to are drawn for paper
        expect(figures.nth(i).locator(".main-svg").first).to_be_attached()
    for hidden in ("header.site-header", "nav.contents", "nav.pager", "input[type=range]", "button", ".site-footer"):
        for node in site_page.locator(hidden).all():
            expect(node).to_be_hidden()
    expect(site_page.locator("#roofline output[name='decode_ms']").first).to_be_visible()
    expect(site_page.locator("#roofline [data-svg='ops'] svg:visible")).to_have_count(1)  # one of its two drawings
    expect(site_page.locator("figure.formula math")).to_be_visible()
    assert site_page.evaluate("getComputedStyle(document.documentElement).colorScheme") == "light"
