"""Predict, then check: the student types a number; the simulator grades it and shows its derivation.

The question text is the lesson's; `question` names a question in sim/questions.py. Until the student
answers, the view says nothing about the answer (the pre-rendered page must not give it away). The page is
its own template (site/templates/widgets/predict.html): the number box with the question's unit and a
Check button, the verdict, then the answer and its derivation once answered.
"""

from __future__ import annotations

from sim.display import fmt_sig
from sim.kit import Number, Select, Widget, output, view
from sim.questions import QUESTIONS

TEXT = {
    "zh": {
        "title": "预测后检查",  # not shown: the section's aria-label (the lesson asks the question)
        "question": "问题",
        "guess": "你的预测",
        "check": "检查",
        "unanswered": "先写下你的预测，再按「检查」。",
        "correct": "对了！在允许误差之内。",
        "high": "偏高了。",
        "low": "偏低了。",
        "answer": "模拟器算出的答案：",
        "your_error": "你的偏差：",
        "error": "{error:+.0f}%（允许误差 ±{tolerance:.0f}%）",
    },
    "en": {
        "title": "Predict, then check",
        "question": "Question",
        "guess": "Your prediction",
        "check": "Check",
        "unanswered": "Write down your prediction, then press Check.",
        "correct": "Right, within tolerance.",
        "high": "Too high.",
        "low": "Too low.",
        "answer": "The simulator's answer: ",
        "your_error": "Your error: ",
        "error": "{error:+.0f}% (tolerance ±{tolerance:.0f}%)",
    },
}

WIDGET = Widget(
    controls=(
        Select("question", default=next(iter(QUESTIONS)), options=tuple(QUESTIONS),
               names={key: key for key in QUESTIONS}),
        Number("guess"),
    ),
)


def render(state) -> dict:
    s = WIDGET.coerce(state)
    t = TEXT[s["lang"]]
    question = QUESTIONS[s["question"]]
    unit = output(0, question.unit)
    if s["guess"] is None:
        outputs = {"verdict": output(0, t["unanswered"]), "expected": output(0, ""), "error": output(0, ""),
                   "unit": unit}
        return view(s, outputs, flags={"answered": False, "correct": False, "incorrect": False})
    answer, error, correct = question.grade(s["guess"], s["lang"])
    if correct:
        verdict = t["correct"]
    else:
        verdict = t["high"] if error > 0 else t["low"]
    outputs = {
        "verdict": output(int(correct), verdict),
        "expected": output(answer.value, f"{fmt_sig(answer.value)} {question.unit}"),
        "error": output(error, t["error"].format(error=error * 100, tolerance=question.tolerance * 100)),
        "unit": unit,
    }
    return view(s, outputs, flags={"answered": True, "correct": correct, "incorrect": not correct},
                derivations={"expected": answer.derivation})
