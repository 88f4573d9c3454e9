"""Predict, then check: the student types a number; the simulator grades it and shows its derivation.

The question text is the lesson's; `question` names a question of sim/questions/ by key. Until the student
answers, the view says nothing about the answer (the pre-rendered page must not give it away). The page is
its own template (site/templates/widgets/predict.html): the number box with the question's unit and a
Check button, the verdict, then the answer and its derivation once answered.

A guess that matches one of the question's common mistakes is answered with that mistake's sentence (the
`mistake` flag is on; the `mistake` output's value is its index in Question.mistakes, its text the key); a guess
off by a slipped unit (Question.grade's `slip`: 100, 1,000 or 1,024 times, or as many times too small) is told so,
with the unit the box asks for; any other wrong guess is too high or too low.
"""

from __future__ import annotations

import math

from sim.kit import Number, Select, Widget, output, view
from sim.page.display import fmt_sig
from sim.questions import QUESTIONS

NO_SPACE_UNITS = ("%", "×")  # written right after the number: 98.4%, 153×

TEXT = {
    "zh": {
        "title": "预测后检查",  # not shown: the section's aria-label (the lesson asks the question)
        "question": "问题",
        "guess": "你的预测",
        "unit=bit": "比特",
        "unit=tokens": "个 token",
        "check": "检查",
        "unanswered": "先写下你的预测，再按「检查」。",
        "correct": "对了！在允许误差之内。",
        "high": "偏高了。",
        "low": "偏低了。",
        "slip_high": "偏高了：差不多是答案的 {factor} 倍。看看单位，这里要的是 {unit}。",
        "slip_low": "偏低了：差不多是答案的 {factor} 分之一。看看单位，这里要的是 {unit}。",
        "slip_high_count": "偏高了：差不多是答案的 {factor} 倍，是不是多乘了一个 {factor}？",
        "slip_low_count": "偏低了：差不多是答案的 {factor} 分之一，是不是多除了一个 {factor}？",
        "answer": "模拟器算出的答案：",
        "your_error": "你的偏差：",
        "error": "{error}（允许误差 ±{tolerance}%）",
    },
    "en": {
        "title": "Predict, then check",
        "question": "Question",
        "guess": "Your prediction",
        "unit=bit": "bits",
        "unit=tokens": "tokens",
        "check": "Check",
        "unanswered": "Write down your prediction, then press Check.",
        "correct": "Right, within tolerance.",
        "high": "Too high.",
        "low": "Too low.",
        "slip_high": "Too high: about {factor} times the answer. Check the unit: the box asks for {unit}.",
        "slip_low": "Too low: about 1/{factor} of the answer. Check the unit: the box asks for {unit}.",
        "slip_high_count": "Too high: about {factor} times the answer. A factor of {factor} too many?",
        "slip_low_count": "Too low: about 1/{factor} of the answer. A factor of {factor} too few?",
        "answer": "The simulator's answer: ",
        "your_error": "Your error: ",
        "error": "{error} (tolerance ±{tolerance}%)",
    },
}

WIDGET = Widget(
    controls=(
        Select("question", default=next(iter(QUESTIONS)), options=tuple(QUESTIONS),
               names={key: key for key in QUESTIONS}),
        Number("guess"),
    ),
)


def unit_in(unit: str, t: dict) -> str:
    """A question's unit in the page's words (TEXT "unit=SYMBOL") where they are not the symbol it is written
    with in its lesson's module, sim/questions/<lesson>.py."""
    return t.get(f"unit={unit}", unit)


def render(state) -> dict:
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    question = QUESTIONS[s["question"]]
    words = unit_in(question.unit, t)
    unit = output(0, words)
    if s["guess"] is None:
        outputs = {"verdict": output(0, t["unanswered"]), "expected": output(0, ""), "error": output(0, ""),
                   "mistake": output(-1, ""), "unit": unit}
        return view(s, outputs, flags={"answered": False, "correct": False, "incorrect": False, "mistake": False})
    grade = question.grade(s["guess"], s["lang"])
    if grade.correct:
        verdict = t["correct"]
    elif grade.mistake is not None:
        verdict = grade.feedback
    elif grade.slip is not None:  # a unit slipped: say by how much, and what the box asks for
        high = grade.slip > 1
        slipped = t[("slip_high" if high else "slip_low") + ("" if question.unit else "_count")]
        verdict = slipped.format(factor=f"{round(grade.slip if high else 1 / grade.slip):,}", unit=words)
    else:
        verdict = t["high"] if grade.error > 0 else t["low"]
    mistake = (output(grade.mistake, question.mistakes[grade.mistake].key) if grade.mistake is not None
               else output(-1, ""))
    outputs = {
        "verdict": output(int(grade.correct), verdict),
        "expected": output(grade.answer.value, with_unit(figure(grade.answer.value, question.unit), words)),
        "error": output(grade.error, t["error"].format(error=signed_percent(grade.error, question.tolerance),
                                                       tolerance=percent_figure(question.tolerance))),
        "mistake": mistake,
        "unit": unit,
    }
    return view(s, outputs, flags={"answered": True, "correct": grade.correct, "incorrect": not grade.correct,
                                   "mistake": grade.mistake is not None},
                derivations={"expected": grade.answer.derivation})


def figure(value: float, unit: str) -> str:
    """The simulator's answer as a figure: a count (no unit, a whole number) as an integer, "85" and never
    "85.0"; anything else to three significant digits, "154", "7.53", "34.4"."""
    if not unit and float(value).is_integer():
        return f"{int(value):,}"
    return fmt_sig(value)


def with_unit(number: str, unit: str) -> str:
    """A number and its unit: "154 tok/s", but "98.4%" and "153×", and a count without a unit just "85"."""
    if not unit:
        return number
    return f"{number}{unit}" if unit in NO_SPACE_UNITS else f"{number} {unit}"


def percent_figure(fraction: float) -> str:
    """A tolerance as a percentage figure without trailing zeros: 0.05 -> "5", 0.005 -> "0.5"."""
    return f"{round(fraction * 100, 6):g}"


def signed_percent(fraction: float, tolerance: float) -> str:
    """The guess's error as a signed percentage, with as many decimals as the tolerance needs (none at 5% and
    above, one below): "+12%", "−1.6%", and "0%" for an error that rounds to zero (never "−0%")."""
    decimals = max(0, -math.floor(math.log10(tolerance * 100 / 5)))
    magnitude = f"{abs(fraction) * 100:,.{decimals}f}"
    if float(magnitude.replace(",", "")) == 0:
        return "0%"
    return f"{'+' if fraction > 0 else '−'}{magnitude}%"
