"""Lesson speculative-decoding in a real Chromium with a real Pyodide: both pages come up with every widget ready,
the spec-sampling widget answers a preset and a number of draws as CPython does, the spec-decode widget answers a
bigger batch and another draft as CPython does and redraws its curve, and the predict boxes grade a right answer
right and a named mistake with that mistake's sentence, their worked answers folded until then. (Every lesson's
widgets and boxes, in both languages, get the generic checks in test_lessons.py.)"""

import json

import pytest
from playwright.sync_api import expect

from sim.questions import QUESTIONS
from tests.browser.conftest import browser_view, cpython_view, open_all_ready, open_ready, show_figures, wait_for_output

LESSON = "speculative-decoding/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
LANGS = pytest.mark.parametrize("lang", ["", "en/"], ids=["zh", "en"])
WIDGETS = ("rule", "spec")
BOXES = ("q-verify", "q-exact", "q-tokens", "q-share", "q-batch")
RULE_READOUTS = ("alpha", "accepted_share", "distance_to_target", "distance_to_draft", "draft_gap")
SPEC_READOUTS = ("tokens_per_call", "speedup", "paper_speedup", "flops_ratio", "best_gamma", "break_even_batch",
                 "c_value", "decode_ms", "verify_ms", "draft_ms", "call_ms", "plain_tokens_per_s",
                 "spec_tokens_per_s", "verify_tokens", "critical_batch")


def lesson_view(page, widget_id: str, **changes) -> dict:
    """CPython's view of a widget on this page: the lesson's settings (with the page's language) plus changes."""
    data = json.loads(page.locator(f"#{widget_id} script.widget-data").text_content())
    return cpython_view(data["widget"], {**data["state"], **changes})


def shows(widget, view: dict, readouts) -> None:
    """Every readout shows this view, value and text."""
    for name in readouts:
        wait_for_output(widget, name, view["outputs"][name]["value"])
        expect(widget.locator(f'output[name="{name}"]').first).to_have_text(view["outputs"][name]["text"])


def figure_shows(widget, name: str, view: dict) -> None:
    """The figure is drawn, and says in words what CPython's view of it says."""
    show_figures(widget)
    figure = widget.locator(f'[data-figure="{name}"]')
    expect(figure).to_have_count(1)
    expect(widget.locator(f'[data-figure="{name}"].js-plotly-plot')).to_have_count(1)
    expect(figure).to_have_attribute("aria-label", view["figures"][name]["alt"])


@LANGS
def test_the_page_comes_up_and_its_boxes_grade_a_right_answer_and_a_named_mistake(site_page, server, lang):
    open_all_ready(site_page, server.url(lang + LESSON))
    for widget_id in (*WIDGETS, *BOXES):
        expect(site_page.locator(f'#{widget_id}[data-state="ready"]')).to_have_count(1)
    words = "en" if lang else "zh"

    # The verify step: one decode step's time is right within the tolerance, which is the point of the question.
    box = site_page.locator("#q-verify")
    worked = site_page.locator('details.worked-answer[data-answer-for="q-verify"]')
    expect(box.locator(".predict-answer")).to_be_hidden()
    expect(worked).to_have_js_property("open", False)
    box.locator('input[name="guess"]').fill("15.41")
    box.locator("button.commit").click()
    right = lesson_view(site_page, "q-verify", guess=15.41)
    assert right["flags"]["correct"]
    expect(box.locator('output[name="verdict"]')).to_have_text(right["outputs"]["verdict"]["text"])
    expect(box.locator('[data-flag="mistake"]')).to_have_attribute("hidden", "")
    expect(box.locator('output[name="expected"]')).to_have_text(right["outputs"]["expected"]["text"])
    expect(box.locator(".predict-answer")).to_be_visible()
    expect(worked).to_have_js_property("open", True)
    assert browser_view(site_page, "q-verify") == right

    # The share of drafted tokens kept: α itself is the named mistake.
    box = site_page.locator("#q-share")
    worked = site_page.locator('details.worked-answer[data-answer-for="q-share"]')
    expect(worked).to_have_js_property("open", False)
    guess = box.locator('input[name="guess"]')
    guess.fill("80")
    guess.press("Enter")
    q = QUESTIONS["drafted-share-08-4"]
    mistake = [m.key for m in q.mistakes].index("alpha_is_share")
    named = lesson_view(site_page, "q-share", guess=80)
    assert not named["flags"]["correct"] and named["outputs"]["verdict"]["text"] == q.mistake_text(mistake, words)
    expect(box.locator('output[name="verdict"]')).to_have_text(q.mistake_text(mistake, words))
    expect(box.locator('[data-flag="mistake"]')).not_to_have_attribute("hidden", "")
    expect(worked).to_have_js_property("open", True)
    assert browser_view(site_page, "q-share") == named
    # the other boxes stay unanswered, their worked answers folded
    for other in ("q-exact", "q-tokens", "q-batch"):
        expect(site_page.locator(f'details.worked-answer[data-answer-for="{other}"]')).to_have_js_property("open",
                                                                                                           False)


def test_the_rule_answers_a_preset_and_more_draws_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), "rule")
    start = lesson_view(site_page, "rule")
    shows(widget, start, RULE_READOUTS)  # the lesson's setting, pre-rendered: the overconfident draft

    widget.locator('[data-param="preset"] input[type="radio"][value="flat"]').check(force=True)
    flat = lesson_view(site_page, "rule", preset="flat", changed="preset")
    shows(widget, flat, RULE_READOUTS)
    assert flat["outputs"]["alpha"]["value"] != start["outputs"]["alpha"]["value"]
    assert browser_view(site_page, "rule") == flat

    widget.locator('input[name="samples"]').fill("100000")
    more = lesson_view(site_page, "rule", preset="flat", samples=100_000, changed="samples")
    shows(widget, more, RULE_READOUTS)
    assert more["state"]["samples"] == 100_000 and more["state"]["preset"] == "flat"
    assert more["outputs"]["distance_to_target"]["value"] < 0.01  # the output follows p, whatever q is
    figure_shows(widget, "figure", more)
    assert browser_view(site_page, "rule") == more
    site_page.wait_for_function("() => location.search.includes('rule.samples=100000')")


def test_the_speed_up_answers_a_bigger_batch_and_another_draft_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url("en/" + LESSON), "spec")
    start = lesson_view(site_page, "spec")
    shows(widget, start, SPEC_READOUTS)  # the lesson's setting, pre-rendered

    widget.locator('input[name="batch"]').fill("128")
    bigger = lesson_view(site_page, "spec", batch=128, changed="batch")
    shows(widget, bigger, SPEC_READOUTS)
    assert bigger["outputs"]["verify_ms"]["value"] > start["outputs"]["verify_ms"]["value"]
    expect(widget.locator('[data-flag="past_ridge"]')).to_be_visible()  # 128 x 5 tokens pass the H100's ridge
    assert browser_view(site_page, "spec") == bigger

    widget.locator('[data-param="draft"] input[type="radio"][value="small"]').check(force=True)
    small = lesson_view(site_page, "spec", batch=128, draft="small", changed="draft")
    shows(widget, small, SPEC_READOUTS)
    assert small["state"]["c"] != bigger["state"]["c"]  # the draft's c, filled in for this draft at this batch
    expect(widget.locator('input[name="c"]')).to_have_value(str(small["state"]["c"]))
    figure_shows(widget, "curve", small)
    assert browser_view(site_page, "spec") == small
    site_page.wait_for_function("() => location.search.includes('spec.draft=small')")
