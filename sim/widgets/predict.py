"""Predict, then check: the student types a number; the simulator grades it and shows its derivation.

The question text is the lesson's; `question` names a check in sim/checkpoints.py. Until the student
answers, the view says nothing about the answer (the pre-rendered page must not give it away).
"""

from __future__ import annotations

from sim.checkpoints import CHECKS
from sim.widgets.controls import Number, Select, coerce_state
from sim.widgets.view import fmt_sig, output, view

TEXT = {
    "zh": {"unanswered": "先写下你的预测，再按「检查」。", "correct": "对了！在允许误差之内。",
           "high": "偏高了。", "low": "偏低了。", "tolerance": "允许误差"},
    "en": {"unanswered": "Write down your prediction, then press Check.", "correct": "Right, within tolerance.",
           "high": "Too high.", "low": "Too low.", "tolerance": "tolerance"},
}

PARAMS = (
    Select("question", {"zh": "问题", "en": "Question"}, default=next(iter(CHECKS)),
           options=tuple((key, {"zh": key, "en": key}) for key in CHECKS)),
    Number("guess", {"zh": "你的预测", "en": "Your prediction"}),
)


def render(state) -> dict:
    s = coerce_state(PARAMS, state)
    t = TEXT[s["lang"]]
    check = CHECKS[s["question"]]
    unit = output(0, check.unit)
    if s["guess"] is None:
        outputs = {"verdict": output(0, t["unanswered"]), "expected": output(0, ""), "error": output(0, ""),
                   "unit": unit}
        return view(s, outputs, flags={"answered": False, "correct": False, "incorrect": False})
    answer, error, correct = check.grade(s["guess"])
    if correct:
        verdict = t["correct"]
    else:
        verdict = t["high"] if error > 0 else t["low"]
    outputs = {
        "verdict": output(int(correct), verdict),
        "expected": output(answer.value, f"{fmt_sig(answer.value)} {check.unit}"),
        "error": output(error, f"{error * 100:+.0f}%（{t['tolerance']} ±{check.tolerance * 100:.0f}%）"),
        "unit": unit,
    }
    return view(s, outputs, flags={"answered": True, "correct": correct, "incorrect": not correct},
                derivations={"expected": answer.derivation})
