"""Lesson quantization in a real Chromium with a real Pyodide: both pages come up with every widget ready, the
quantize-tensor widget answers a finer granularity and AWQ's scaling as CPython does, the quant-roofline widget answers
a bigger batch and an unfused FP8 KV as CPython does and redraws its curve, and the predict boxes grade a right answer
right and a named mistake with that mistake's sentence, their worked answers folded until then. (Every lesson's
widgets and boxes, in both languages, get the generic checks in test_lessons.py.)"""


import pytest
from playwright.sync_api import expect

from sim.questions import QUESTIONS
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

LESSON = "quantization/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
LANGS = pytest.mark.parametrize("lang", ["", "en/"], ids=["zh", "en"])
WIDGETS = ("tensor", "quant")
BOXES = ("q-speedup", "q-bits", "q-big", "q-kv", "q-quality")
TENSOR_READOUTS = ("bits_per_weight", "rms_error", "max_error", "output_error", "salient_error", "levels", "alpha")
QUANT_READOUTS = ("step_ms", "bf16_step_ms", "speedup_vs_bf16", "tokens_per_s", "bits_per_weight", "weights_gb",
                  "resident_gb", "kv_per_token", "kv_read_gb", "ridge_batch", "max_requests", "fits")


@LANGS
def test_the_page_comes_up_and_its_boxes_grade_a_right_answer_and_a_named_mistake(site_page, server, lang):
    open_all_ready(site_page, server.url(lang + LESSON))
    for widget_id in (*WIDGETS, *BOXES):
        expect(site_page.locator(f'#{widget_id}[data-state="ready"]')).to_have_count(1)
    words = "en" if lang else "zh"

    # INT4 at batch 1: 3.3x is right, the point of the question being that it is not 4x.
    grades_right(site_page, "q-speedup", 3.3)
    # The group scales forgotten: 4 bits is the named mistake.
    grades_as_mistake(site_page, "q-bits", 4, mistake_sentence("int4-bits-g128", "no_scales", words))
    worked_answers_folded(site_page, ("q-big", "q-kv", "q-quality"))


def test_the_unfused_kv_box_names_the_fused_speed_up(site_page, server):
    open_ready(site_page, server.url("en/" + LESSON), "q-kv")
    fused = round(QUESTIONS["fp8-kv-unfused-llama"].mistake_values()[0], 2)
    grades_as_mistake(site_page, "q-kv", fused, mistake_sentence("fp8-kv-unfused-llama", "fused", "en"))


def test_the_tensor_answers_a_finer_granularity_and_awq_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), "tensor")
    start = lesson_view(site_page, "tensor")
    readouts_show(widget, start, TENSOR_READOUTS)  # the lesson's setting, pre-rendered: INT4, one scale for the tensor

    choose(widget.locator('[data-param="granularity"] input[type="radio"][value="group"]'))
    grouped = lesson_view(site_page, "tensor", granularity="group", changed="granularity")
    readouts_show(widget, grouped, TENSOR_READOUTS)
    assert grouped["outputs"]["output_error"]["value"] < start["outputs"]["output_error"]["value"]
    assert browser_view(site_page, "tensor") == grouped

    choose(widget.locator('[data-param="scaling"] input[type="radio"][value="awq"]'))
    awq = lesson_view(site_page, "tensor", granularity="group", scaling="awq", changed="scaling")
    readouts_show(widget, awq, TENSOR_READOUTS)
    assert awq["outputs"]["output_error"]["value"] < grouped["outputs"]["output_error"]["value"]
    figure_shows(widget, "figure", awq)
    assert browser_view(site_page, "tensor") == awq
    site_page.wait_for_function("() => location.search.includes('tensor.scaling=awq')")


def test_the_step_answers_a_bigger_batch_and_an_unfused_kv_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url("en/" + LESSON), "quant")
    start = lesson_view(site_page, "quant")
    readouts_show(widget, start, QUANT_READOUTS)  # the lesson's setting, pre-rendered: INT4 at batch 1

    widget.locator('input[name="batch"]').fill("512")
    bigger = lesson_view(site_page, "quant", batch=512, changed="batch")
    readouts_show(widget, bigger, QUANT_READOUTS)
    assert bigger["outputs"]["speedup_vs_bf16"]["text"] == "1.00×"
    expect(widget.locator('[data-flag="past_ridge"]')).to_be_visible()
    assert browser_view(site_page, "quant") == bigger

    choose(widget.locator('[data-param="kv"] input[type="radio"][value="fp8"]'))
    choose(widget.locator('[data-param="kv_dequant"] input[type="radio"][value="unfused"]'))
    unfused = lesson_view(site_page, "quant", batch=512, kv="fp8", kv_dequant="unfused", changed="kv_dequant")
    readouts_show(widget, unfused, QUANT_READOUTS)
    expect(widget.locator('[data-flag="unfused"]')).to_be_visible()
    assert unfused["outputs"]["max_requests"]["value"] > bigger["outputs"]["max_requests"]["value"]
    figure_shows(widget, "curve", unfused)
    assert browser_view(site_page, "quant") == unfused
    site_page.wait_for_function("() => location.search.includes('quant.kv_dequant=unfused')")
