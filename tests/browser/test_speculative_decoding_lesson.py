"""Lesson speculative-decoding in a real Chromium with a real Pyodide: both pages come up with every widget ready,
the spec-sampling widget answers a preset and a number of draws as CPython does, the spec-decode widget answers a
bigger batch and another draft as CPython does and redraws its curve, and the predict boxes grade a right answer
right and a named mistake with that mistake's sentence, their worked answers folded until then. (Every lesson's
widgets and boxes, in both languages, get the generic checks in test_lessons.py.)"""


import pytest
from playwright.sync_api import expect

from tests.browser.conftest import (
    browser_view,
    choose,
    figure_shows,
    grades_as_mistake,
    grades_right,
    lesson_view,
    mistake_sentence,
    open_all_ready,
    open_ready,
    readouts_show,
    worked_answers_folded,
)

LESSON = "speculative-decoding/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
LANGS = pytest.mark.parametrize("lang", ["", "en/"], ids=["zh", "en"])
WIDGETS = ("rule", "spec")
BOXES = ("q-verify", "q-exact", "q-tokens", "q-share", "q-batch")
RULE_READOUTS = ("alpha", "accepted_share", "distance_to_target", "distance_to_draft", "draft_gap")
SPEC_READOUTS = ("tokens_per_call", "speedup", "paper_speedup", "flops_ratio", "best_gamma", "break_even_batch",
                 "c_value", "decode_ms", "verify_ms", "draft_ms", "call_ms", "plain_tokens_per_s",
                 "spec_tokens_per_s", "verify_tokens", "critical_batch")


@LANGS
def test_the_page_comes_up_and_its_boxes_grade_a_right_answer_and_a_named_mistake(site_page, server, lang):
    open_all_ready(site_page, server.url(lang + LESSON))
    for widget_id in (*WIDGETS, *BOXES):
        expect(site_page.locator(f'#{widget_id}[data-state="ready"]')).to_have_count(1)
    words = "en" if lang else "zh"

    # The verify step: one decode step's time is right within the tolerance, which is the point of the question.
    grades_right(site_page, "q-verify", 15.41)
    # The share of drafted tokens kept: α itself is the named mistake.
    grades_as_mistake(site_page, "q-share", 80, mistake_sentence("drafted-share-08-4", "alpha_is_share", words))
    worked_answers_folded(site_page, ("q-exact", "q-tokens", "q-batch"))


def test_the_rule_answers_a_preset_and_more_draws_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), "rule")
    start = lesson_view(site_page, "rule")
    readouts_show(widget, start, RULE_READOUTS)  # the lesson's setting, pre-rendered: the overconfident draft

    choose(widget.locator('[data-param="preset"] input[type="radio"][value="flat"]'))
    flat = lesson_view(site_page, "rule", preset="flat", changed="preset")
    readouts_show(widget, flat, RULE_READOUTS)
    assert flat["outputs"]["alpha"]["value"] != start["outputs"]["alpha"]["value"]
    assert browser_view(site_page, "rule") == flat

    widget.locator('input[name="samples"]').fill("100000")
    more = lesson_view(site_page, "rule", preset="flat", samples=100_000, changed="samples")
    readouts_show(widget, more, RULE_READOUTS)
    assert more["state"]["samples"] == 100_000 and more["state"]["preset"] == "flat"
    assert more["outputs"]["distance_to_target"]["value"] < 0.01  # the output follows p, whatever q is
    figure_shows(widget, "figure", more)
    assert browser_view(site_page, "rule") == more
    site_page.wait_for_function("() => location.search.includes('rule.samples=100000')")


def test_the_speed_up_answers_a_bigger_batch_and_another_draft_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url("en/" + LESSON), "spec")
    start = lesson_view(site_page, "spec")
    readouts_show(widget, start, SPEC_READOUTS)  # the lesson's setting, pre-rendered

    widget.locator('input[name="batch"]').fill("128")
    bigger = lesson_view(site_page, "spec", batch=128, changed="batch")
    readouts_show(widget, bigger, SPEC_READOUTS)
    assert bigger["outputs"]["verify_ms"]["value"] > start["outputs"]["verify_ms"]["value"]
    expect(widget.locator('[data-flag="past_ridge"]')).to_be_visible()  # 128 x 5 tokens pass the H100's ridge
    assert browser_view(site_page, "spec") == bigger

    choose(widget.locator('[data-param="draft"] input[type="radio"][value="small"]'))
    small = lesson_view(site_page, "spec", batch=128, draft="small", changed="draft")
    readouts_show(widget, small, SPEC_READOUTS)
    assert small["state"]["c"] != bigger["state"]["c"]  # the draft's c, filled in for this draft at this batch
    expect(widget.locator('input[name="c"]')).to_have_value(str(small["state"]["c"]))
    figure_shows(widget, "curve", small)
    assert browser_view(site_page, "spec") == small
    site_page.wait_for_function("() => location.search.includes('spec.draft=small')")
