"""Lesson inference-vs-training: predict-then-check questions graded by the simulator (a named mistake in both
languages), and its links. (Every box grading its own answer is checked for every lesson in test_lessons.py.)"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser_view, cpython_view, island, open_ready

LESSON = "inference-vs-training/"
pytestmark = pytest.mark.lesson(LESSON.strip("/"))


def predicted(guess) -> dict:
    return cpython_view("predict", {"question": "ceiling-7b-a100", "guess": guess})


def test_a_right_prediction_is_graded_right_with_its_derivation(site_page, server):
    box = open_ready(site_page, server.url(LESSON), "q3")
    answer = box.locator(".predict-answer")
    expect(answer).to_be_hidden()  # the page does not give the answer away before the student tries
    box.locator('input[name="guess"]').fill("150")
    box.locator("button.commit").click()
    expect(box.locator('output[name="verdict"]')).to_contain_text("对了")
    expect(answer).to_be_visible()
    expect(box.locator('output[name="expected"]')).to_have_text(predicted(150)["outputs"]["expected"]["text"])
    expect(box.locator('[data-derivation="expected"]')).to_have_text(predicted(150)["derivations"]["expected"])
    assert site_page.evaluate("window.inferlab.views.q3") == predicted(150)


def test_a_wrong_prediction_is_graded_wrong_from_the_keyboard(site_page, server):
    box = open_ready(site_page, server.url(LESSON), "q3")
    guess = box.locator('input[name="guess"]')
    guess.fill("78")  # the figure a "2 FLOP per byte" reading would suggest is half the real ceiling
    guess.press("Enter")
    expect(box.locator('output[name="verdict"]')).to_contain_text("偏低")
    expect(box.locator('output[name="error"]')).to_have_text(predicted(78)["outputs"]["error"]["text"])
    guess.fill("")
    guess.press("Enter")
    expect(box.locator(".predict-answer")).to_be_hidden()
    expect(box.locator('output[name="verdict"]')).to_have_text(predicted(None)["outputs"]["verdict"]["text"])


@pytest.mark.parametrize("lang, named", [("", "漏了 TTFT"), ("en/", "forgets TTFT")], ids=["zh", "en"])
def test_forgetting_ttft_is_named_with_the_answer_and_its_derivation(site_page, server, lang, named):
    box = open_ready(site_page, server.url(lang + LESSON), "q6")
    state = island(box)["state"]
    assert state["question"] == "e2e-latency"
    answer = box.locator(".predict-answer")
    expect(answer).to_be_hidden()
    box.locator('input[name="guess"]').fill("12.5")  # TPOT x 500 alone: the TTFT left out
    box.locator("button.commit").click()
    named_view = cpython_view("predict", {**state, "guess": 12.5})
    verdict = box.locator('output[name="verdict"]')
    expect(verdict).to_have_text(named_view["outputs"]["verdict"]["text"])
    expect(verdict).to_contain_text(named)
    expect(box.locator('[data-flag="mistake"]')).not_to_have_attribute("hidden", "")
    expect(answer).to_be_visible()
    expect(box.locator('output[name="expected"]')).to_have_text(named_view["outputs"]["expected"]["text"])
    expect(box.locator('output[name="error"]')).to_have_text(named_view["outputs"]["error"]["text"])
    expect(box.locator('[data-derivation="expected"]')).to_have_text(named_view["derivations"]["expected"])
    assert browser_view(site_page, "q6") == named_view
    assert browser_view(site_page, "q6")["flags"]["mistake"] is True


def test_a_shared_link_restores_a_prediction(site_page, server):
    box = open_ready(site_page, server.url(LESSON + "?q5.guess=40"), "q5")
    expect(box.locator('input[name="guess"]')).to_have_value("40")
    expect(box.locator('output[name="verdict"]')).to_contain_text("偏高")


def test_checkpoint_answers_reveal_after_trying(site_page, server):
    site_page.goto(server.url(LESSON))
    answers = site_page.locator("#quiz ~ details.dig")
    assert answers.count() == 3  # the questions in words; the numeric ones are asked where they are worked out
    assert site_page.locator('#quiz ~ [data-widget="predict"]').count() == 0
    first = answers.first
    first.locator("summary").click()
    expect(first.locator("p").first).to_be_visible()


def test_the_two_lessons_link_to_each_other(site_page, server):
    site_page.goto(server.url(LESSON))  # goto waits for the load event: the whole page is parsed
    back = site_page.locator('main a[href^="../prefill-decode/"]')
    assert back.count() >= 2
    back.first.click()
    expect(site_page.locator("h1")).to_have_text("prefill 与 decode：生成到底慢在哪")
    site_page.wait_for_load_state()  # the heading comes early; the links near the end may still be parsing
    forward = site_page.locator('main a[href="../inference-vs-training/"]')
    assert forward.count() >= 1
    forward.first.click()
    expect(site_page.locator("h1")).to_have_text("推理和训练是两回事")
