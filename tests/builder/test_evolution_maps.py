"""The lessons' evolution maps agree on where each step is taught: a step that two maps name links to the same
lesson in both, the one whose widgets show it."""

from __future__ import annotations

import re

import pytest
import yaml

import build
from sim.languages import LANGUAGES

SOURCES = build.load_sources(build.Paths())[0]


def evolution_steps(lang: str) -> list[tuple[str, str, str | None]]:
    """(lesson slug, step name, linked lesson) for every step of every evolution map in a language."""
    steps = []
    for lesson in SOURCES.lessons:
        if lesson.lang != lang:
            continue
        for block in re.findall(r"^::: evolution\n(.*?)^:::$", lesson.body, flags=re.S | re.M):
            for step in yaml.safe_load(re.sub(r"\{sim\}`[^`]*`", "N", block)):
                steps.append((lesson.slug, step["name"], step.get("lesson")))
    return steps


@pytest.mark.parametrize("lang", LANGUAGES)
def test_batching_before_continuous_batching_links_to_the_lesson_that_teaches_it(lang):
    """Plain (static) batching is taught in inference-vs-training, with the batch-throughput widget."""
    words = {"zh": ("批处理", "连续"), "en": ("batching", "continuous")}[lang]
    batching = [(slug, name, target) for slug, name, target in evolution_steps(lang)
                if words[0] in name.lower() and words[1] not in name.lower()]
    assert len(batching) >= 2  # both maps name the step
    assert {target for _, _, target in batching} == {"inference-vs-training"}, batching
