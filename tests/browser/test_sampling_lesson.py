"""Lesson sampling in a real Chromium with a real Pyodide: both pages come up with every widget ready, the sampling
widget answers a flat distribution, top-k and a hotter temperature as CPython does and redraws its histogram, the
sampling-cost widget answers a bigger batch and one request's top-p in a greedy batch as CPython does and redraws its
curve, and the predict boxes grade a right answer right and a named mistake with that mistake's sentence, their worked
answers folded until then. The earlier lessons now link here. (Every lesson's widgets and boxes, in both languages,
get the generic checks in test_lessons.py.)"""


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

LESSON = "sampling/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
LANGS = pytest.mark.parametrize("lang", ["", "en/"], ids=["zh", "en"])
WIDGETS = ("truncate", "sampling-cost")
BOXES = ("q-entropy", "q-temperature", "q-top-p", "q-min-p", "q-cost")
TRUNCATE_READOUTS = ("kept_tokens", "kept_mass", "entropy_bits", "top_probability", "rest_share")
COST_READOUTS = ("sampling_ms", "decode_ms", "share", "from_batch", "sampling_bytes", "sampling_ops", "intensity",
                 "logits_bytes")


@LANGS
def test_the_page_comes_up_and_its_boxes_grade_a_right_answer_and_a_named_mistake(site_page, server, lang):
    open_all_ready(site_page, server.url(lang + LESSON))
    for widget_id in (*WIDGETS, *BOXES):
        expect(site_page.locator(f'#{widget_id}[data-state="ready"]')).to_have_count(1)
    words = "en" if lang else "zh"

    # The nucleus: 5 tokens is right; stopping while the sum is still below p (4) is the named mistake.
    grades_right(site_page, "q-top-p", 5)
    grades_as_mistake(site_page, "q-min-p", 2, mistake_sentence("min-p-02-example", "absolute", words))
    worked_answers_folded(site_page, ("q-entropy", "q-cost"))


def test_temperature_on_probabilities_is_named(site_page, server):
    open_ready(site_page, server.url("en/" + LESSON), "q-temperature")
    grades_as_mistake(site_page, "q-temperature", 35,
                      mistake_sentence("temperature-half-example", "on_probabilities", "en"))
    open_ready(site_page, server.url("en/" + LESSON), "q-top-p")
    grades_as_mistake(site_page, "q-top-p", 4, mistake_sentence("top-p-09-example", "below_p", "en"))


def test_the_truncation_answers_a_flat_distribution_top_k_and_a_hotter_temperature_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), "truncate")
    start = lesson_view(site_page, "truncate")
    readouts_show(widget, start, TRUNCATE_READOUTS)  # the lesson's setting, pre-rendered: peaked, nothing cut

    choose(widget.locator('[data-param="distribution"] input[type="radio"][value="flat"]'))
    flat = lesson_view(site_page, "truncate", distribution="flat", changed="distribution")
    readouts_show(widget, flat, TRUNCATE_READOUTS)
    assert browser_view(site_page, "truncate") == flat

    widget.locator('input[name="top_k"]').fill("40")
    top_k = lesson_view(site_page, "truncate", distribution="flat", top_k=40, changed="top_k")
    readouts_show(widget, top_k, TRUNCATE_READOUTS)
    assert top_k["outputs"]["kept_tokens"]["value"] == 40 and top_k["outputs"]["kept_mass"]["value"] < 0.4
    assert browser_view(site_page, "truncate") == top_k

    widget.locator('input[name="temperature"]').fill("1.5")
    hot = lesson_view(site_page, "truncate", distribution="flat", top_k=40, temperature=1.5, changed="temperature")
    readouts_show(widget, hot, TRUNCATE_READOUTS)
    assert hot["outputs"]["entropy_bits"]["value"] > top_k["outputs"]["entropy_bits"]["value"]
    figure_shows(widget, "figure", hot)
    assert browser_view(site_page, "truncate") == hot
    site_page.wait_for_function("() => location.search.includes('truncate.temperature=1.5')")


def test_the_cost_answers_a_bigger_batch_and_one_requests_top_p_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url("en/" + LESSON), "sampling-cost")
    start = lesson_view(site_page, "sampling-cost")
    readouts_show(widget, start, COST_READOUTS)  # the lesson's setting, pre-rendered: batch 64, top-p by a full sort

    widget.locator('input[name="batch"]').fill("512")
    bigger = lesson_view(site_page, "sampling-cost", batch=512, changed="batch")
    readouts_show(widget, bigger, COST_READOUTS)
    assert bigger["outputs"]["share"]["value"] > start["outputs"]["share"]["value"]
    assert browser_view(site_page, "sampling-cost") == bigger

    choose(widget.locator('[data-param="mix"] input[type="radio"][value="one-whole"]'))
    whole = lesson_view(site_page, "sampling-cost", batch=512, mix="one-whole", changed="mix")
    readouts_show(widget, whole, COST_READOUTS)
    expect(widget.locator('[data-flag="whole"]')).to_be_visible()
    assert whole["outputs"]["sampling_bytes"]["value"] > bigger["outputs"]["sampling_bytes"]["value"]
    figure_shows(widget, "curve", whole)
    assert browser_view(site_page, "sampling-cost") == whole
    site_page.wait_for_function("() => location.search.includes('sampling-cost.mix=one-whole')")


def test_the_earlier_lessons_link_here_in_both_languages(site_page, server):
    titles = {"": "从 logits 到一个 token：温度、top-k、top-p、min-p，以及服务器为此付出的代价",
              "en/": "From logits to a token: temperature, top-k, top-p, min-p, and what they cost a server"}
    for lang, title in titles.items():
        for earlier in ("prefill-decode/", "speculative-decoding/"):
            site_page.goto(server.url(lang + earlier))
            links = site_page.locator('main a[href^="../sampling/"]')
            assert links.count() >= 2, (lang, earlier)
            expect(site_page.locator("main .upcoming-link")).to_have_count(0)
        links.first.click()
        expect(site_page.locator("h1")).to_have_text(title)
        # and on: the next gap and the pager lead to speculative decoding
        expect(site_page.locator('a[rel="next"]')).to_have_attribute("href", "../speculative-decoding/")
        expect(site_page.locator('a[rel="prev"]')).to_have_attribute("href", "../kv-cache-serving/")
