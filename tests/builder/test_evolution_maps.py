"""The evolution map is written once per language (lessons/<lang>/evolution.yml) and shown by every lesson: its steps
follow the course, each is taught where its widgets show it, and every language's map is the same map."""

from __future__ import annotations

import re

import pytest

import build
from sim.page.languages import LANGUAGES

SOURCES, PROBLEMS, _ = build.load_sources(build.Paths())
COURSE = SOURCES.course


def test_the_maps_load_without_a_problem():
    assert PROBLEMS == []
    assert set(COURSE.evolution) == set(COURSE.languages())


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_lesson_shows_the_one_map_once_and_has_a_step_on_it(lang):
    steps = {item.lesson for item in COURSE.evolution[lang].items}
    for lesson in COURSE.lessons(lang):
        assert re.findall(r"^::: evolution\n:::$", lesson.body, flags=re.M) == ["::: evolution\n:::"], lesson.path
        assert lesson.slug in steps, lesson.slug


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_steps_follow_the_course(lang):
    taught = [item.lesson for item in COURSE.evolution[lang].items if item.lesson is not None]
    assert taught == sorted(taught, key=COURSE.plan.index)
    # every lesson written has its place on the map; a planned one gets its step when it is written
    assert set(taught) == {lesson.slug for lesson in COURSE.lessons(lang)}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_batching_before_continuous_batching_links_to_the_lesson_that_teaches_it(lang):
    """Plain (static) batching is taught in inference-vs-training, with the batch-throughput widget."""
    words = {"zh": ("批处理", "连续"), "en": ("batching", "continuous")}[lang]
    batching = [item.lesson for item in COURSE.evolution[lang].items
                if words[0] in item.name.lower() and words[1] not in item.name.lower()]
    assert batching == ["inference-vs-training"]


def test_no_page_says_lessons_are_missing_while_every_lesson_on_the_map_is_written():
    """The maps used to say that lessons "not yet written are marked" when all of them were written; the map's
    upcoming badge says so only where a lesson is missing."""
    taught = {item.lesson for chart in COURSE.evolution.values() for item in chart.items if item.lesson}
    assert all(COURSE.is_written(lang, slug) for lang in COURSE.languages() for slug in taught)
    stale = re.compile(r"(not yet written|not written yet) are marked|还没写的会标出")
    texts = [lesson.body for lesson in SOURCES.lessons]
    texts += [chart.intro for chart in COURSE.evolution.values()]
    assert not [m.group(0) for text in texts for m in stale.finditer(text)]


# A step of a built page's map: whether it is the page's own (class "here"), its name, and its link if it has one.
STEP = re.compile(r'<li class="generation( here)?"[^>]*>\s*<span class="generation-number">\d+</span>\s*'
                  r'<(?:a|span) class="generation-name"(?: href="([^"]*)")?>([^<]*)<')


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_built_lesson_shows_one_map_in_the_courses_order_marking_its_own_step(built_site, lang):
    written = [lesson.slug for lesson in COURSE.lessons(lang)]
    folder = built_site if lang == LANGUAGES[0] else built_site / lang
    shown = set()
    for slug in written:
        page = (folder / slug / "index.html").read_text(encoding="utf-8")
        assert page.count('<ol class="evolution">') == 1, slug
        steps = STEP.findall(page)
        shown.add(tuple(name for _, _, name in steps))
        taught = [slug if here else href.strip("./").split("/")[0] if href else None for here, href, _ in steps]
        assert slug in taught, (lang, slug, taught)  # the lesson has its place on the map, marked
        assert not any(here and href for here, href, _ in steps), (lang, slug)  # no link to the page itself
        order = [written.index(s) for s in taught if s is not None]
        assert order == sorted(order) and set(order) == set(range(len(written))), (lang, slug, taught)
    assert len(shown) == 1, lang  # the same map on every page of a language


PAGER = re.compile(r'<a class="pager-(?:prev|next)" rel="(prev|next)" href="([^"]*)">')


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_built_lesson_links_its_neighbours_in_the_course(built_site, lang):
    """Previous and next follow the written lessons in plan order, across chapters; the first has no previous and
    the last no next (the browser follows the links in tests/browser/test_wayfinding.py)."""
    written = [lesson.slug for lesson in COURSE.lessons(lang)]
    folder = built_site if lang == LANGUAGES[0] else built_site / lang
    for i, slug in enumerate(written):
        links = dict(PAGER.findall((folder / slug / "index.html").read_text(encoding="utf-8")))
        expected = {rel: f"../{written[j]}/" for rel, j in (("prev", i - 1), ("next", i + 1)) if 0 <= j < len(written)}
        assert links == expected, (lang, slug)
