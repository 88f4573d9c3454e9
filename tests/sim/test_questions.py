import re

import pytest

from sim import widgets
from sim.questions import QUESTIONS
from tests.sim.test_widgets import check_view

# Hand-computed from config numbers: Llama-2-7B matmul weights = (32 layers x (4 x 4096^2 + 3 x 4096 x 11008)
# + 32,000 x 4096 LM head) x 2 bytes = 13,214,154,752 B; A100 2.039 TB/s, 312 TFLOPS; H100 3.35 TB/s.
EXPECTED = {
    "ceiling-7b-a100": 2.039e12 / 13_214_154_752,
    "h100-vs-a100-decode": 3.35 / 2.039,
    "kv-7b-2048-32": 2 * 32 * 32 * 128 * 2 * 2048 * 32 / 1e9,
    "e2e-latency": 0.2 + 0.025 * 500,
    "tpot-share": 12.5 / 12.7 * 100,
    "ridge-gap-a100": 312 / 2.039,  # over an intensity of ~1
    "decode-intensity": 1.0,
}

CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
NUMBER = re.compile(r"\d[\d,.]*\d|\d")


@pytest.mark.parametrize("key, value", EXPECTED.items())
def test_answers_match_hand_computation(key, value):
    assert QUESTIONS[key].answer("zh").value == pytest.approx(value, rel=0.01)


@pytest.mark.parametrize("key", QUESTIONS)
def test_every_question_is_derived_in_both_languages_with_the_same_answer(key):
    zh, en = QUESTIONS[key].answer("zh"), QUESTIONS[key].answer("en")
    assert zh.value == en.value
    assert not CHINESE.search(en.derivation), en.derivation
    assert NUMBER.findall(zh.derivation) == NUMBER.findall(en.derivation)  # the same numbers, in the same order


def test_unanswered_view_does_not_give_the_answer_away():
    v = widgets.render("predict", {"question": "ceiling-7b-a100"})
    check_view(v)
    assert v["flags"] == {"answered": False, "correct": False, "incorrect": False}
    assert "154" not in str(v)


@pytest.mark.parametrize("guess, correct, verdict", [(150, True, "对了"), (143, True, "对了"), (78, False, "偏低"),
                                                      (300, False, "偏高"), ("154", True, "对了")])
def test_grading_with_tolerance(guess, correct, verdict):
    v = widgets.render("predict", {"question": "ceiling-7b-a100", "guess": guess})
    check_view(v)
    assert v["flags"]["correct"] is correct and v["flags"]["incorrect"] is not correct
    assert verdict in v["outputs"]["verdict"]["text"]
    assert v["outputs"]["expected"]["text"] == "154 tok/s"
    assert "13.21 GB" in v["derivations"]["expected"]


def test_bad_guess_means_unanswered():
    for guess in ("abc", "", None, float("nan"), [1]):
        assert not widgets.render("predict", {"question": "e2e-latency", "guess": guess})["flags"]["answered"]


@pytest.mark.parametrize("key", QUESTIONS)
@pytest.mark.parametrize("guess", [None, 1, 78])
def test_both_languages_render_and_the_english_view_has_no_chinese(key, guess):
    zh = widgets.render("predict", {"question": key, "guess": guess})
    en = widgets.render("predict", {"question": key, "guess": guess, "lang": "en"})
    check_view(en)
    assert en["flags"] == zh["flags"] and en["state"]["lang"] == "en"
    assert {k: o["value"] for k, o in en["outputs"].items()} == {k: o["value"] for k, o in zh["outputs"].items()}
    texts = [o["text"] for o in en["outputs"].values()] + list(en["derivations"].values())
    assert not any(CHINESE.search(text) for text in texts), texts


def test_english_grading_words():
    v = widgets.render("predict", {"question": "ceiling-7b-a100", "guess": 78, "lang": "en"})
    assert v["outputs"]["verdict"]["text"] == "Too low."
    assert v["outputs"]["error"]["text"] == "-49% (tolerance ±10%)"
    assert v["derivations"]["expected"] == "bandwidth ÷ weights read per step = 2.039 TB/s ÷ 13.21 GB = 154 tok/s"
