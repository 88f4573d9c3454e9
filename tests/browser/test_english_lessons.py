"""The English lessons in a real Chromium with a real Pyodide: every widget becomes ready, answers an input in
English exactly as CPython does, grades predictions in English, and the pages show no Chinese. (The request-path
widget's English twin is in test_request_path_widget.py.)"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser_view, cpython_view, open_ready, wait_for_output

LESSON = "en/inference-vs-training/"
PREFILL_DECODE = "en/prefill-decode/"
KV_CACHE_SERVING = "en/kv-cache-serving/"
PREDICT_BOXES = tuple((LESSON, box) for box in ("q2", "q2-gap", "q3", "q4", "q5", "q6", "q6-share", "q8")) + (
    (PREFILL_DECODE, "q-speed"),) + tuple((KV_CACHE_SERVING, box) for box in ("q-reserve", "q-held", "q-paged", "q-swap"))
CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")  # CJK scripts, ideographs, full-width forms


@dataclass(frozen=True)
class Change:
    """One control of a widget moved to a new value, and a readout that must follow it."""

    widget: str
    control: str  # a selector inside the widget
    value: str  # what the control is set to
    state: dict  # the same change as state, for CPython
    readout: str
    lesson: str = LESSON

    def apply(self, widget) -> None:
        control = widget.locator(self.control)
        if self.control.startswith("select"):
            control.select_option(self.value)
        else:
            control.fill(self.value)


CHANGES = (
    Change("phase-table", 'input[name="prompt_tokens"]', "2048", {"prompt_tokens": 2048}, "prefill_ms"),
    Change("decode-ceiling", 'select[name="hardware"]', "h100-sxm", {"hardware": "h100-sxm"}, "ceiling_tokens_per_s"),
    Change("batch-throughput", 'input[name="B"]', "58", {"B": 58}, "total_tokens_per_s"),
    Change("kv-capacity", 'input[name="tokens"]', "4096", {"tokens": 4096}, "kv_total"),
    Change("latency-budget", 'input[name="gpu_dollars_per_hour"]', "4", {"gpu_dollars_per_hour": 4},
           "cost_per_million_tokens"),
    Change("roofline", 'input[name="T"]', "2048", {"T": 2048}, "prefill_ms", PREFILL_DECODE),
    Change("estimate-stepper", 'select[name="hardware"]', "a100-sxm-80gb", {"hardware": "a100-sxm-80gb"},
           "naive_ms", PREFILL_DECODE),
    Change("matmul-shapes", 'input[name="T"]', "2048", {"T": 2048}, "gemm_intensity", PREFILL_DECODE),
    Change("batching-timeline", 'input[name="max_batch"]', "4", {"max_batch": 4}, "throughput_tokens_per_s",
           KV_CACHE_SERVING),
    Change("kv-blocks", 'select[name="model"]', "qwen3-32b", {"model": "qwen3-32b"}, "max_requests", KV_CACHE_SERVING),
)


def island(widget) -> dict:
    """The widget's JSON island: its name, the lesson's settings (with the page's language) and CPython's view."""
    return json.loads(widget.locator("script.widget-data").text_content())


def english_view(widget, change: dict | None = None) -> dict:
    """CPython's English view of a widget: the lesson's settings, plus a change."""
    data = island(widget)
    return cpython_view(data["widget"], {**data["state"], **(change or {}), "lang": "en"})


def assert_same_view(got: dict, expected: dict) -> None:
    """The browser's view equals CPython's; plotly.js fills in layout defaults, so figures compare by their data."""
    assert {k: v for k, v in got.items() if k != "figures"} == {k: v for k, v in expected.items() if k != "figures"}
    figures = expected.get("figures", {})
    assert sorted(got.get("figures", {})) == sorted(figures)
    for name, figure in figures.items():
        assert [(t.get("x"), t.get("y")) for t in got["figures"][name]["data"]] == \
            [(t.get("x"), t.get("y")) for t in figure["data"]], name


def assert_english_before_python(widget, readout: str) -> None:
    """The page's language reached the widget, and its pre-rendered readout is CPython's English text."""
    assert island(widget)["state"]["lang"] == "en"
    expected = english_view(widget)["outputs"][readout]["text"]
    assert expected and not CJK.search(expected)
    expect(widget.locator(f'output[name="{readout}"]').first).to_have_text(expected)


@pytest.mark.parametrize("change", CHANGES, ids=[c.widget for c in CHANGES])
def test_every_simulator_widget_shows_english_and_becomes_ready(site_page, server, change):
    widget = open_ready(site_page, server.url(change.lesson), change.widget)
    assert_english_before_python(widget, change.readout)
    expect(widget.locator(change.control)).to_be_enabled()


@pytest.mark.parametrize("change", CHANGES, ids=[c.widget for c in CHANGES])
def test_one_input_changes_the_readouts_as_in_cpython(site_page, server, change):
    widget = open_ready(site_page, server.url(change.lesson), change.widget)
    before = english_view(widget)["outputs"][change.readout]
    expected = english_view(widget, change.state)
    after = expected["outputs"][change.readout]
    assert after["value"] != before["value"]  # the change is one the readout shows
    change.apply(widget)
    wait_for_output(widget, change.readout, after["value"])
    expect(widget.locator(f'output[name="{change.readout}"]').first).to_have_text(after["text"])
    assert_same_view(browser_view(site_page, change.widget), expected)


def test_a_named_mistake_is_graded_in_english(site_page, server):
    box = open_ready(site_page, server.url(LESSON), "q6")
    assert island(box)["state"]["question"] == "e2e-latency"
    answer = box.locator(".predict-answer")
    expect(answer).to_be_hidden()
    box.locator('input[name="guess"]').fill("12.5")  # TPOT x 500 alone: the TTFT left out
    box.locator("button.commit").click()
    named = english_view(box, {"guess": 12.5})
    verdict = box.locator('output[name="verdict"]')
    expect(verdict).to_have_text(named["outputs"]["verdict"]["text"])
    expect(verdict).to_contain_text("forgets TTFT")
    expect(box.locator('[data-flag="mistake"]')).not_to_have_attribute("hidden", "")
    expect(answer).to_be_visible()
    expect(box.locator('output[name="expected"]')).to_have_text(named["outputs"]["expected"]["text"])
    expect(box.locator('output[name="error"]')).to_have_text(named["outputs"]["error"]["text"])
    expect(box.locator('[data-derivation="expected"]')).to_have_text(named["derivations"]["expected"])
    assert browser_view(site_page, "q6") == named
    assert browser_view(site_page, "q6")["flags"]["mistake"] is True


@pytest.mark.parametrize("lesson, box_id", PREDICT_BOXES, ids=[box for _, box in PREDICT_BOXES])
def test_every_prediction_box_becomes_ready_and_grades_its_own_answer_right_in_english(site_page, server, lesson,
                                                                                     box_id):
    box = open_ready(site_page, server.url(lesson), box_id)
    assert_english_before_python(box, "verdict")  # "Write down your prediction, then press Check."
    right = english_view(box, {"guess": 1})["outputs"]["expected"]["value"]
    box.locator('input[name="guess"]').fill(str(right))
    box.locator('input[name="guess"]').press("Enter")
    expect(box.locator('output[name="verdict"]')).to_have_text("Right, within tolerance.")
    assert browser_view(site_page, box_id) == english_view(box, {"guess": right})


@pytest.mark.parametrize("lesson, marks", [
    (LESSON, ("Inference is not training", "Show the answer to question 9")),
    (PREFILL_DECODE, ("Tom gave the apple to", "Tom · gave · the · apple · to")),
    (KV_CACHE_SERVING, ("Why 1.56×, not 36.9×", "How much does beam search save?")),
])
def test_the_visible_text_has_no_chinese(site_page, server, lesson, marks):
    site_page.goto(server.url(lesson))
    site_page.wait_for_function(
        "() => [...document.querySelectorAll('[data-widget]')].every(w => w.dataset.state === 'ready')",
        timeout=60_000)
    # Open every collapsed part (answers, derivations) so that its text counts as visible too.
    site_page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    # The one part of the page in another language is the link to the Chinese edition, marked with its lang.
    foreign = site_page.evaluate(
        "[...document.body.querySelectorAll('[lang]')].filter(e => !e.lang.startsWith('en'))"
        ".map(e => e.matches('[data-language-switch]'))")
    assert foreign == [True]
    text = site_page.evaluate(
        "() => { let t = document.body.innerText;"
        " for (const e of document.body.querySelectorAll('[lang]:not([lang|=en])')) t = t.replace(e.innerText, '');"
        " return t; }")
    assert all(mark in text for mark in marks)
    assert CJK.findall(text) == [], [line for line in text.splitlines() if CJK.search(line)]
