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
