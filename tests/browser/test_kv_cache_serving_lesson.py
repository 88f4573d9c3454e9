"""Lesson kv-cache-serving in a real Chromium with a real Pyodide: its two widgets answer an input as CPython does,
its formula reads the kv-blocks widget, a prediction is graded right and wrong (with the named mistake), and the two
earlier lessons link to it in both languages. (Every lesson's widgets and boxes, in both languages, are checked in test_lessons.py.)"""


import pytest
from playwright.sync_api import expect

from sim.physics import presets
from sim.serving import kv_layout
from tests.browser.conftest import (
    browser_view,
    choose,
    eventually,
    lesson_view,
    open_ready,
    wait_for_output,
)

LESSON = "kv-cache-serving/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))


def test_batching_timeline_switches_policy_rate_and_kv_memory_as_cpython_does(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), "batching-timeline")
    static = lesson_view(site_page, "batching-timeline")
    # The page reads before Python: the lesson's scenario, static batching, pre-rendered.
    for name in ("capacity_per_s", "ttft_p90_ms", "goodput_per_s", "capacity_gain"):
        expect(widget.locator(f'output[name="{name}"]').first).to_have_text(static["outputs"][name]["text"])
    expect(widget.locator('output[name="capacity_gain"]').first).to_have_text("1.89×")
    timeline = widget.locator('[data-svg="timeline"]')
    assert timeline.locator('rect[data-kind="held"]').count() > 0  # finished members held until the batch ends

    choose(widget.locator('input[name="batching-timeline-policy"][value="continuous"]'))
    continuous = lesson_view(site_page, "batching-timeline", policy="continuous")
    wait_for_output(widget, "ttft_p90_ms", continuous["outputs"]["ttft_p90_ms"]["value"])
    expect(widget.locator('output[name="tpot_p50_ms"]').first).to_have_text(
        continuous["outputs"]["tpot_p50_ms"]["text"])
    expect(timeline.locator('rect[data-kind="held"]')).to_have_count(0)  # returned as soon as each is done
    assert continuous["outputs"]["ttft_p90_ms"]["value"] < static["outputs"]["ttft_p90_ms"]["value"] / 10
    assert browser_view(site_page, "batching-timeline") == continuous

    # Past static batching's capacity: static says overloaded and shows no percentile.
    choose(widget.locator('input[name="batching-timeline-policy"][value="static"]'))
    widget.locator('input[name="rate"]').fill("12")
    overloaded = lesson_view(site_page, "batching-timeline", rate=12)
    expect(widget.locator('[data-flag="overloaded"]')).to_be_visible()
    expect(widget.locator('output[name="ttft_p90_ms"]').first).to_have_text(overloaded["outputs"]["ttft_p90_ms"]["text"])
    assert browser_view(site_page, "batching-timeline") == overloaded
    site_page.wait_for_function("() => location.search.includes('batching-timeline.rate=12')")

    # Paged KV, Qwen3-32B on the chat-like trace at 4 req/s: Python answers as CPython does.
    choose(widget.locator('input[name="batching-timeline-policy"][value="continuous"]'))
    choose(widget.locator('input[name="batching-timeline-trace"][value="chat"]'))
    widget.locator('select[name="model"]').select_option("qwen3-32b")
    widget.locator('input[name="max_batch"]').fill("256")
    widget.locator('input[name="rate"]').fill("4")
    widget.locator('select[name="kv_policy"]').select_option("paged")
    paged = lesson_view(site_page, "batching-timeline", policy="continuous", trace="chat", model="qwen3-32b",
                        max_batch=256, rate=4, kv_policy="paged")
    assert not paged["flags"]["overloaded"]
    wait_for_output(widget, "capacity_per_s", paged["outputs"]["capacity_per_s"]["value"])
    expect(widget.locator('[data-flag="overloaded"]')).to_be_hidden()
    assert browser_view(site_page, "batching-timeline") == paged


def test_kv_blocks_pages_the_kv_and_the_formula_follows(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), "kv-blocks")
    expect(widget.locator('output[name="token_share"]').first).to_have_text("15.6%")
    at_max = lesson_view(site_page, "kv-blocks")  # the requests that fit move with the preset's memory
    expect(widget.locator('output[name="max_requests"]').first).to_have_text(at_max["outputs"]["max_requests"]["text"])
    mapped = widget.locator('[data-svg="map"] .layout-wide')
    expect(mapped.locator('path[data-state="never-used"]')).to_have_count(1)

    choose(widget.locator('input[name="kv-blocks-policy"][value="paged"]'))
    paged = lesson_view(site_page, "kv-blocks", policy="paged")
    wait_for_output(widget, "max_requests", paged["outputs"]["max_requests"]["value"])
    assert paged["outputs"]["max_requests"]["value"] > at_max["outputs"]["max_requests"]["value"]
    expect(widget.locator('output[name="token_share"]').first).to_have_text("97.7%")
    expect(widget.locator('output[name="waste_per_request_tokens"]').first).to_contain_text("7.5")
    expect(widget.locator('.widget-table tr.current')).to_have_attribute("data-policy", "paged")
    assert browser_view(site_page, "kv-blocks") == paged

    # A bigger block wastes more of each last block.
    widget.locator('input[name="block_size"]').fill("256")
    big = lesson_view(site_page, "kv-blocks", policy="paged", block_size=256)
    wait_for_output(widget, "max_requests", big["outputs"]["max_requests"]["value"])
    expect(widget.locator('output[name="token_share"]').first).to_have_text("71.9%")
    assert browser_view(site_page, "kv-blocks") == big

    # The formula's terms read this widget: n is the requests that fit now, S the hybrid's state.
    formula = site_page.locator("figure.formula")
    panel = formula.locator(".term-panel")
    formula.locator('[data-term-button="fit_requests"]').click()
    expect(panel.locator(".term-value")).to_contain_text(big["outputs"]["max_requests"]["text"])
    formula.locator('[data-term="state_per_sequence"]').click()
    expect(panel.locator(".term-value")).to_contain_text("151.0 MB")


def test_a_shared_prefix_is_stored_once_under_paging(site_page, server):
    # The sharing section's scenario, set on the simulator as the lesson says: paged, Qwen3-32B, a 341-token prompt.
    widget = open_ready(site_page, server.url(LESSON), "kv-blocks")
    choose(widget.locator('input[name="kv-blocks-policy"][value="paged"]'))
    widget.locator('select[name="model"]').select_option("qwen3-32b")
    alone = lesson_view(site_page, "kv-blocks", policy="paged", model="qwen3-32b")
    wait_for_output(widget, "max_requests", alone["outputs"]["max_requests"]["value"])
    expect(widget.locator('[data-svg="map"] .layout-wide path[data-state="shared"]')).to_have_count(0)
    widget.locator('input[name="prefix_tokens"]').fill("341")
    shared = lesson_view(site_page, "kv-blocks", policy="paged", model="qwen3-32b", prefix_tokens=341)
    wait_for_output(widget, "max_requests", shared["outputs"]["max_requests"]["value"])
    expect(widget.locator('output[name="shared_saving_bytes"]').first).to_have_text(
        shared["outputs"]["shared_saving_bytes"]["text"])
    # GB: the prefix's blocks, stored once, counted over the requests that fit even unshared (issue #23)
    free = kv_layout.free_bytes(presets.model("qwen3-32b"), presets.hardware("h100-sxm"))
    assert 5 < shared["outputs"]["shared_saving_bytes"]["value"] < free / 1e9
    expect(widget.locator('output[name="unshared_requests"]').first).to_have_text(
        shared["outputs"]["unshared_requests"]["text"])
    assert shared["outputs"]["unshared_requests"]["value"] < shared["outputs"]["max_requests"]["value"]
    expect(widget.locator('[data-svg="map"] .layout-wide path[data-state="shared"]')).to_have_count(1)
    assert browser_view(site_page, "kv-blocks") == shared
    # Contiguous reservations cannot share: the note says so, and nothing is saved.
    choose(widget.locator('input[name="kv-blocks-policy"][value="contiguous-oracle"]'))
    wait_for_output(widget, "shared_saving_bytes", 0)
    expect(widget.locator('[data-flag="sharing_unused"]')).to_be_visible()


def test_paging_draws_request_ones_block_table_and_copy_on_write(site_page, server):
    widget = open_ready(site_page, server.url(LESSON), "kv-blocks")
    table, cow = widget.locator('[data-flag="block_table"]'), widget.locator('[data-flag="copy_on_write"]')
    expect(table).to_be_hidden()  # contiguous reservations have no block table
    expect(cow).to_be_hidden()
    choose(widget.locator('input[name="kv-blocks-policy"][value="paged"]'))
    paged = lesson_view(site_page, "kv-blocks", policy="paged")
    wait_for_output(widget, "max_requests", paged["outputs"]["max_requests"]["value"])
    expect(table).to_be_visible()
    expect(cow).to_be_hidden()  # nothing shared yet
    drawn = table.locator('[data-svg="blocks"] rect[data-logical]')
    expect(drawn).to_have_count(paged["svg"]["blocks"].count("data-logical="))
    assert browser_view(site_page, "kv-blocks")["svg"]["blocks"] == paged["svg"]["blocks"]

    widget.locator('input[name="samples"]').fill("4")
    four = lesson_view(site_page, "kv-blocks", policy="paged", samples=4)
    wait_for_output(widget, "max_requests", four["outputs"]["max_requests"]["value"])
    expect(cow).to_be_visible()
    copies = cow.locator('[data-svg="cow"] rect[data-kind="copied"]')
    expect(copies).to_have_count(4)  # one per sample, each its own physical block
    assert len({copies.nth(k).get_attribute("data-physical") for k in range(4)}) == 4
    assert browser_view(site_page, "kv-blocks") == four

    # On a phone both pictures shrink to the column instead of scrolling sideways.
    site_page.set_viewport_size({"width": 375, "height": 812})
    for name in ("blocks", "cow"):
        frame = widget.locator(f'[data-svg="{name}"]').locator("xpath=ancestor::div[@data-scroll][1]")
        assert frame.evaluate("el => el.scrollWidth <= el.clientWidth"), name


def test_predictions_are_graded_right_and_a_named_mistake_wrong(site_page, server):
    box = open_ready(site_page, server.url(LESSON), "q-paged")
    answer = box.locator(".predict-answer")
    expect(answer).to_be_hidden()
    guess = box.locator('input[name="guess"]')
    guess.fill("16")  # a whole block: the bound, never the average
    guess.press("Enter")
    named = lesson_view(site_page, "q-paged", guess=16)
    verdict = box.locator('output[name="verdict"]')
    expect(verdict).to_have_text(named["outputs"]["verdict"]["text"])
    expect(verdict).to_contain_text("一整块")
    assert named["outputs"]["mistake"]["text"] == "whole_block"
    expect(box.locator('[data-flag="mistake"]')).not_to_have_attribute("hidden", "")
    expect(answer).to_be_visible()
    expect(box.locator('output[name="expected"]')).to_have_text("7.52")
    assert browser_view(site_page, "q-paged") == named
    guess.fill("8")  # half a block is right
    box.locator("button.commit").click()
    expect(verdict).to_contain_text("对了")
    assert browser_view(site_page, "q-paged") == lesson_view(site_page, "q-paged", guess=8)

    swap = site_page.locator("#q-swap")
    swap.locator('input[name="guess"]').fill("134")  # the KV alone, the 151 MB state forgotten
    swap.locator("button.commit").click()
    expect(swap.locator('output[name="verdict"]')).to_contain_text("只搬了 KV")
    assert browser_view(site_page, "q-swap")["outputs"]["mistake"]["text"] == "no_state"


def test_the_earlier_lessons_link_here_in_both_languages(site_page, server):
    titles = {"": "成百上千个请求一起 decode：KV cache 放在哪、请求怎么排",
              "en/": "Hundreds of requests decoding together: where their KV cache lives and how they are scheduled"}
    for lang, title in titles.items():
        for earlier in ("prefill-decode/", "inference-vs-training/"):
            site_page.goto(server.url(lang + earlier))
            links = site_page.locator('main a[href="../kv-cache-serving/"]')
            assert links.count() >= 2, (lang, earlier)
            expect(site_page.locator("main .upcoming-link", has_text="KV cache")).to_have_count(0)
        links.first.click()
        expect(site_page.locator("h1")).to_have_text(title)
        # and back: the evolution map and the pager lead to the lessons before it
        expect(site_page.locator('a[rel="prev"]')).to_have_attribute("href", "../inference-vs-training/")
        expect(site_page.locator('ol.evolution a.generation-name[href="../prefill-decode/"]')).to_have_count(1)


@pytest.mark.parametrize("lang", ["", "en/"], ids=["zh", "en"])
def test_a_scenario_link_in_the_prose_opens_its_scenario_in_place(site_page, server, lang):
    """The try-list's 'down to 1' is a scenario link: followed, the timeline shows arrival rate 1 (the lesson's other
    settings kept), as CPython computes it, without reloading the page; the address bar holds the scenario."""
    widget = open_ready(site_page, server.url(lang + LESSON), "batching-timeline")
    site_page.evaluate("window.notReloaded = true")
    link = site_page.locator('a[data-scenario][href="?batching-timeline.rate=1#batching-timeline"]')
    link.click()
    expected = lesson_view(site_page, "batching-timeline", rate=1)
    expect(widget.locator("#batching-timeline-rate")).to_have_value("1")
    eventually(site_page, "id => window.inferlab.views[id]?.state.rate === 1", "batching-timeline")
    assert browser_view(site_page, "batching-timeline") == expected
    assert site_page.evaluate("window.notReloaded") is True
    eventually(site_page, "() => location.search === '?batching-timeline.rate=1' && location.hash === '#batching-timeline'")
    assert site_page.evaluate("document.activeElement.id") == "batching-timeline"


def test_paper_drops_the_question_boxes_and_prints_the_worked_answers(site_page, server):
    """Printed, a question box is a blank to fill that nobody can press; its worked answer prints open instead."""
    open_ready(site_page, server.url("en/" + LESSON), "q-reserve")
    answer = site_page.locator('details.worked-answer[data-answer-for="q-reserve"] > p').first
    expect(answer).to_be_hidden()
    site_page.emulate_media(media="print")
    expect(site_page.locator("#q-reserve")).to_be_hidden()
    expect(answer).to_be_visible()
