"""A chapter's page, in each language at a desktop's and a phone's width: its lessons (written ones linked in the
course's order, planned ones marked upcoming), the whole evolution map with its steps marked, nothing wider than the
screen, nothing axe objects to in either theme, every link reached from the keyboard; and the student's progress
through it, read from what progress.js keeps, on the chapter's page and on the home page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import expect

from builder import urls
from tests.browser.test_lessons import AXE, COURSE, WIDTHS, violations

WORDS = {lang: yaml.safe_load((Path(__file__).resolve().parents[2] / "site" / "i18n" / f"{lang}.yml")
                              .read_text(encoding="utf-8")) for lang in COURSE.languages()}
FIRST, SECOND = COURSE.chapters[0], COURSE.chapters[1]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("lang", COURSE.languages())
def test_a_chapter_page_lists_its_lessons_and_the_whole_map_and_fits_the_screen(site_page, server, lang, width):
    site_page.set_viewport_size(WIDTHS[width])
    site_page.emulate_media(color_scheme="light")
    for chapter in (FIRST, SECOND):
        site_page.goto(server.url(urls.page(lang, chapter.slug)))
        expect(site_page.locator("h1")).to_have_text(COURSE.chapter_word(lang, chapter.slug, "title"))
        written = [slug for slug in chapter.lessons if COURSE.is_written(lang, slug)]
        links = site_page.locator("ol.lesson-list > li > a")
        expect(links).to_have_count(len(written))
        assert links.evaluate_all("links => links.map(a => a.getAttribute('href'))") == [f"../{s}/" for s in written]
        expect(site_page.locator("ol.lesson-list > li.upcoming")).to_have_count(len(chapter.lessons) - len(written))
        # the whole map, each step this chapter's lessons teach marked
        steps = COURSE.evolution[lang].items
        expect(site_page.locator("ol.evolution > li.generation")).to_have_count(len(steps))
        expect(site_page.locator("ol.evolution > li.here")).to_have_count(
            sum(step.lesson in chapter.lessons for step in steps))
        assert site_page.evaluate("document.documentElement.scrollWidth") <= WIDTHS[width]["width"]
        site_page.evaluate(AXE.read_text(encoding="utf-8"))
        assert violations(site_page, colours=width == "desktop") == [], chapter.slug
    if width == "desktop":  # the dark theme's colours, on the page with the map's steps marked
        site_page.emulate_media(color_scheme="dark")
        site_page.goto(server.url(urls.page(lang, FIRST.slug)))
        expect(site_page.locator("html")).to_have_attribute("data-theme", "dark")
        site_page.evaluate(AXE.read_text(encoding="utf-8"))
        assert violations(site_page) == []


def test_a_chapter_is_reached_and_left_from_the_keyboard(site_page, server):
    site_page.goto(server.url(urls.page("en")))
    site_page.locator(f"#chapter-{FIRST.slug} a").focus()
    site_page.keyboard.press("Enter")
    expect(site_page).to_have_url(server.url(urls.page("en", FIRST.slug)))
    site_page.locator("main").focus()
    for _ in range(3):  # the chapter's size and summary are text: the next stop is its first lesson
        site_page.keyboard.press("Tab")
        if site_page.evaluate("document.activeElement.closest('ol.lesson-list') !== null"):
            break
    site_page.keyboard.press("Enter")
    expect(site_page).to_have_url(server.url(urls.page("en", FIRST.lessons[0])))
    site_page.locator("a.lesson-chapter").press("Enter")  # the lesson's header leads back to its chapter
    expect(site_page).to_have_url(server.url(urls.page("en", FIRST.slug)))
    site_page.locator('a[rel="next"]').press("Enter")
    expect(site_page).to_have_url(server.url(urls.page("en", SECOND.slug)))


@pytest.mark.parametrize("lang", COURSE.languages())
def test_progress_through_a_chapter_shows_on_its_page_and_on_the_home_page(site_page, server, lang):
    page = server.url(urls.page(lang, FIRST.slug))
    site_page.goto(page)
    line = site_page.locator(f'[data-chapter-progress="{FIRST.slug}"]')
    expect(line).to_be_hidden()  # nothing kept yet
    questions = line.get_attribute("data-questions").split()
    sections = line.get_attribute("data-sections").split()
    assert questions and sections
    # One question answered right and one section read, kept as progress.js keeps them (in no language).
    asked, read = questions[0], sections[-1]
    slug, section = read.split("#")
    kept = {"questions": {asked: {"setting": {}, "state": {"guess": 1}, "correct": True}}, "read": {slug: [section]}}
    site_page.evaluate("([key, value]) => localStorage.setItem(key, value)",
                       ["inferlab-progress /", json.dumps(kept)])  # the site is served at the root
    site_page.reload()
    shown = WORDS[lang]["script"]["progress"]
    expect(line).to_have_text(shown["chapter"].format(right=1, questions=len(questions), read=1,
                                                      sections=len(sections)))
    lesson = asked.split("#")[0]
    total = sum(key.startswith(f"{lesson}#") for key in questions)
    expect(site_page.locator(f'[data-progress="{lesson}"]')).to_have_text(shown["right"].format(right=1, total=total))
    site_page.goto(server.url(urls.page(lang)))
    expect(site_page.locator(f'[data-chapter-progress="{FIRST.slug}"]')).to_be_visible()
    expect(site_page.locator(f'[data-chapter-progress="{SECOND.slug}"]')).to_be_hidden()  # nothing kept in it
