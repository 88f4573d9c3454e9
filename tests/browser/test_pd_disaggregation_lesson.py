"""Lesson pd-disaggregation in a real Chromium with a real Pyodide: the prefill-interference widget answers chunking
and a bigger batch as CPython does and redraws its steps, and a predict box grades a right answer right and a named
mistake with that mistake's sentence, its worked answer folded until the box is answered. (Every lesson's widgets and
boxes, in both languages, get the generic checks in test_lessons.py.)"""


import pytest
from playwright.sync_api import expect

from sim.questions import QUESTIONS
from tests.browser.conftest import browser_view, choose, lesson_view, open_ready, wait_for_output

LESSON = "pd-disaggregation/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))
LANGS = pytest.mark.parametrize("lang", ["", "en/"], ids=["zh", "en"])
READOUTS = ("stall_ms", "ttft_ms", "steps", "decode_ms")


def bars(widget):
    """The step diagram's bars as a desktop sees them: one decode part per step."""
    return widget.locator('[data-svg="timeline"] .layout-wide rect[data-kind="decode"]')


def shows(widget, view: dict) -> None:
    """The readouts the lesson talks about show this view, value and text."""
    for name in READOUTS:
        wait_for_output(widget, name, view["outputs"][name]["value"])
        expect(widget.locator(f'output[name="{name}"]').first).to_have_text(view["outputs"][name]["text"])


@LANGS
def test_chunking_and_a_bigger_batch_answer_as_cpython_does_and_redraw_the_steps(site_page, server, lang):
    widget = open_ready(site_page, server.url(lang + LESSON), "prefill-interference")
    whole = lesson_view(site_page, "prefill-interference")
    shows(widget, whole)  # the lesson's setting, pre-rendered: the prompt whole, in one step
    expect(bars(widget)).to_have_count(1)
    expect(widget.locator('[data-svg="timeline"] .layout-wide rect[data-kind="chunk"]')).to_have_count(1)

    widget.locator('select[name="chunk_tokens"]').select_option("256")
    chunked = lesson_view(site_page, "prefill-interference", chunk_tokens="256")
    shows(widget, chunked)
    assert chunked["outputs"]["steps"]["value"] == 8
    assert chunked["outputs"]["stall_ms"]["value"] < whole["outputs"]["stall_ms"]["value"] / 5  # nearly free
    assert chunked["outputs"]["ttft_ms"]["value"] > whole["outputs"]["ttft_ms"]["value"]  # the joiner pays
    expect(bars(widget)).to_have_count(8)  # one bar per step now
    expect(widget.locator('[data-flag="nearly_free"]')).to_be_visible()
    assert browser_view(site_page, "prefill-interference") == chunked

    # A batch of 128: the chunk and the batch together pass the ridge, and every step costs more.
    widget.locator('input[name="batch"]').fill("128")
    bigger = lesson_view(site_page, "prefill-interference", chunk_tokens="256", batch=128)
    shows(widget, bigger)
    assert bigger["outputs"]["decode_ms"]["value"] > chunked["outputs"]["decode_ms"]["value"]
    expect(widget.locator('[data-flag="past_ridge"]')).to_be_visible()
    expect(widget.locator('[data-flag="nearly_free"]')).to_be_hidden()
    expect(bars(widget)).to_have_count(8)
    # the redrawn diagram names the new longest step, as CPython drew it
    longest = widget.locator('[data-svg="timeline"] .layout-wide svg')
    expect(longest).to_have_attribute("aria-label", bigger["svg"]["timeline"].split('aria-label="')[1].split('"')[0])
    assert browser_view(site_page, "prefill-interference") == bigger
    site_page.wait_for_function("() => location.search.includes('prefill-interference.batch=128')")


@LANGS
def test_the_stall_box_names_the_unchanged_decode_step_and_opens_its_answer_only_when_answered(site_page, server,
                                                                                                lang):
    box = open_ready(site_page, server.url(lang + LESSON), "q-stall")
    worked = site_page.locator('details.worked-answer[data-answer-for="q-stall"]')
    expect(box.locator(".predict-answer")).to_be_hidden()
    expect(worked).to_have_js_property("open", False)
    guess = box.locator('input[name="guess"]')
    guess.fill("19.47")  # the decode step, as if nobody joined
    expect(worked).to_have_js_property("open", False)  # typing is not answering
    guess.press("Enter")
    named = lesson_view(site_page, "q-stall", guess=19.47)
    q = QUESTIONS["stall-2048-batch32"]
    mistake = [m.key for m in q.mistakes].index("decode_unchanged")
    verdict = box.locator('output[name="verdict"]')
    expect(verdict).to_have_text(q.mistake_text(mistake, "en" if lang else "zh"))
    assert named["outputs"]["verdict"]["text"] == q.mistake_text(mistake, "en" if lang else "zh")
    expect(box.locator('[data-flag="mistake"]')).not_to_have_attribute("hidden", "")
    expect(box.locator(".predict-answer")).to_be_visible()
    expect(worked).to_have_js_property("open", True)
    assert browser_view(site_page, "q-stall") == named

    guess.fill("107.5")
    box.locator("button.commit").click()
    right = lesson_view(site_page, "q-stall", guess=107.5)
    assert right["flags"]["correct"]
    expect(verdict).to_have_text(right["outputs"]["verdict"]["text"])
    expect(box.locator('[data-flag="mistake"]')).to_have_attribute("hidden", "")
    expect(box.locator('output[name="expected"]')).to_have_text(right["outputs"]["expected"]["text"])
    assert browser_view(site_page, "q-stall") == right


def test_the_chunk_and_transfer_boxes_name_their_mistakes(site_page, server):
    open_ready(site_page, server.url("en/" + LESSON), "q-transfer")
    for box_id, key, guess, mistake, words in (
            ("q-chunk", "chunk-256-stall", "32.2", "proportional", "the prefill's share per chunk"),
            ("q-chunk-ttft", "chunk-256-ttft", "107.5", "free_for_prompt", "the joiner waits for all 8 steps"),
            ("q-transfer", "kv-transfer-13b-25gbps", "16.8", "gbit_as_gbyte", "reads 25 Gbit/s as 25 GB/s")):
        box = site_page.locator(f"#{box_id}")
        worked = site_page.locator(f'details.worked-answer[data-answer-for="{box_id}"]')
        expect(worked).to_have_js_property("open", False)
        box.locator('input[name="guess"]').fill(guess)
        box.locator("button.commit").click()
        expect(box.locator('output[name="verdict"]')).to_contain_text(words)
        assert browser_view(site_page, box_id)["outputs"]["mistake"]["text"] == mistake
        assert browser_view(site_page, box_id) == lesson_view(site_page, box_id, guess=float(guess))
        expect(worked).to_have_js_property("open", True)
        assert QUESTIONS[key].grade(float(guess), "en").mistake is not None


SLO_READOUTS = ("ttft_p50_ms", "ttft_p90_ms", "tpot_p50_ms", "tpot_p90_ms", "throughput_tokens_per_s", "attainment",
                "goodput_rps_per_gpu", "kv_transfer_ms")


def test_slo_serving_answers_a_policy_a_rate_and_a_target_as_cpython_does(site_page, server):
    # In one language: Python's answers do not depend on it, and each language's readouts and notes for the lesson's
    # setting are checked on every page (test_lessons.py).
    widget = open_ready(site_page, server.url("en/" + LESSON), "slo-serving")

    def check(**changes) -> dict:
        view = lesson_view(site_page, "slo-serving", **changes)
        for name in SLO_READOUTS:
            wait_for_output(widget, name, view["outputs"][name]["value"])
            expect(widget.locator(f'output[name="{name}"]').first).to_have_text(view["outputs"][name]["text"])
        if changes:  # the lesson's setting is pre-rendered; every change is Python's in the browser
            assert browser_view(site_page, "slo-serving") == view
        return view

    start = check()
    # Colocated, the GPU split and the link do nothing: marked, and pointing at the note that says why.
    link, note = widget.locator('[data-param="link"]'), widget.locator('[data-flag="colocated_gpus"]')
    expect(link).to_have_attribute("data-inert", "")
    expect(note).to_be_visible()
    expect(link).to_have_attribute("aria-describedby", note.get_attribute("id"))
    expect(widget.locator('[data-param="decode_gpus"] input[type="number"]')).to_have_attribute(
        "aria-describedby", note.get_attribute("id"))
    # Prefill and decode apart over a 25 Gbit/s network: the KV transfer appears, and counts in TPOT.
    choose(widget.locator('[data-param="policy"] input[type="radio"][value="disaggregated"]'))
    choose(widget.locator('[data-param="link"] input[type="radio"][value="25gbps"]'))
    apart = check(policy="disaggregated", link="25gbps")
    expect(link).not_to_have_attribute("data-inert", "")
    expect(link).not_to_have_attribute("aria-describedby", note.get_attribute("id"))
    expect(note).to_be_hidden()
    assert start["outputs"]["kv_transfer_ms"]["value"] == 0 < apart["outputs"]["kv_transfer_ms"]["value"]
    assert apart["outputs"]["gpus"]["value"] == 2
    # A tighter TPOT target than the run's p90: fewer requests meet it, and the bars say which miss.
    tight = apart["outputs"]["tpot_p50_ms"]["value"] // 1
    widget.locator('[data-param="tpot_slo_ms"] input[type="number"]').fill(str(int(tight)))
    missed = check(policy="disaggregated", link="25gbps", tpot_slo_ms=int(tight))
    assert missed["outputs"]["attainment"]["value"] < apart["outputs"]["attainment"]["value"]
    expect(widget.locator('[data-flag="misses"]')).to_be_visible()
