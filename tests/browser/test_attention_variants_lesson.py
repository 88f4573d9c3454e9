"""Lesson attention-variants in a real Chromium with a real Pyodide: both pages come up with every widget ready, the
kv-heads widget answers another design and fewer K/V heads as CPython does and redraws its diagram, the
kv-capacity-curves widget answers another model and context as CPython does, and the predict boxes grade a right
answer right and a named mistake with that mistake's sentence, their worked answers folded until then. (Every lesson's
widgets and boxes, in both languages, get the generic checks in test_lessons.py.)"""

import pytest
from playwright.sync_api import expect

from sim.questions import QUESTIONS
from tests.browser.conftest import (
    browser_view,
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

LESSON = "attention-variants/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
LANGS = pytest.mark.parametrize("lang", ["", "en/"], ids=["zh", "en"])
WIDGETS = ("curves", "heads")
BOXES = ("q-hybrid", "q-gqa", "q-mla", "q-even")
HEADS_READOUTS = ("kv_per_layer", "kv_elements", "kv_bytes_per_token", "share_of_mha", "kv_bytes_per_request",
                  "state_bytes_per_request", "break_even_tokens", "max_requests", "attention_ms")
CURVES_READOUTS = ("fit.mha", "fit.gqa", "fit.mqa", "fit.mla", "fit.hybrid", "crossing")


@LANGS
def test_the_page_comes_up_and_its_boxes_grade_a_right_answer_and_a_named_mistake(site_page, server, lang):
    open_all_ready(site_page, server.url(lang + LESSON))
    for widget_id in (*WIDGETS, *BOXES):
        expect(site_page.locator(f'#{widget_id}[data-state="ready"]')).to_have_count(1)
    words = "en" if lang else "zh"
    # 13 requests of 32,768 tokens in 30 GB is right; counting the recurrent state alone is the named mistake
    grades_right(site_page, "q-hybrid", 13)
    no_kv = QUESTIONS["mla-bytes-deepseek-v3"].mistake_values()[0]  # the 576 elements taken for bytes
    grades_as_mistake(site_page, "q-mla", round(no_kv, 1),
                      mistake_sentence("mla-bytes-deepseek-v3", "elements_as_bytes", words))
    worked_answers_folded(site_page, ("q-gqa", "q-even"))


def test_the_heads_answer_another_design_and_fewer_kv_heads_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url("en/" + LESSON), "heads")
    start = lesson_view(site_page, "heads")
    readouts_show(widget, start, HEADS_READOUTS)  # the lesson's setting, pre-rendered: Qwen3-32B, GQA-8
    widget.locator('input[name="kv_heads"]').fill("1")
    mqa = lesson_view(site_page, "heads", kv_heads=1, changed="kv_heads")
    readouts_show(widget, mqa, HEADS_READOUTS)
    assert mqa["outputs"]["kv_bytes_per_token"]["value"] * 8 == start["outputs"]["kv_bytes_per_token"]["value"]
    assert browser_view(site_page, "heads") == mqa

    widget.locator('select[name="design"]').select_option("deepseek-v3")
    mla = lesson_view(site_page, "heads", kv_heads=1, design="deepseek-v3", changed="design")
    readouts_show(widget, mla, HEADS_READOUTS)
    assert mla["state"]["mechanism"] == "mla" and mla["outputs"]["kv_per_layer"]["text"] == "576"
    # the diagram is redrawn: one latent under all 128 query heads
    expect(widget.locator('[data-svg="heads"] .layout-wide svg')).to_have_attribute(
        "aria-label", mla["svg"]["heads"].split('aria-label="')[1].split('"')[0])
    assert browser_view(site_page, "heads") == mla
    site_page.wait_for_function("() => location.search.includes('heads.design=deepseek-v3')")


def test_the_curves_answer_another_model_and_context_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), "curves")
    start = lesson_view(site_page, "curves")
    readouts_show(widget, start, CURVES_READOUTS)
    widget.locator('select[name="design"]').select_option("opt-13b")
    opt = lesson_view(site_page, "curves", design="opt-13b", changed="design")
    readouts_show(widget, opt, CURVES_READOUTS)
    widget.locator('input[name="context"]').fill("2048")
    short = lesson_view(site_page, "curves", design="opt-13b", context=2048, changed="context")
    readouts_show(widget, short, CURVES_READOUTS)
    assert short["outputs"]["fit.mha"]["value"] > opt["outputs"]["fit.mha"]["value"]
    figure_shows(widget, "figure", short)
    assert browser_view(site_page, "curves") == short
