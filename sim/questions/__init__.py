"""The numeric questions lessons ask in "predict, then check" boxes: the simulator computes each answer, how it is
derived, and the wrong answers students commonly give, so that a lesson's questions are graded by the same maths as
its widgets (sim/questions/question.py says how).

Each lesson's questions are a module of their own, sim/questions/<lesson>.py (the lesson's slug with underscores),
holding that lesson's questions and nothing else: their words (TEXT), how each is computed, its tolerance and its
mistakes. QUESTIONS gathers them by key, for the predict widget (`question: KEY`) and the tests.
"""

from __future__ import annotations

from sim.questions import (
    attention_variants,
    inference_vs_training,
    kv_cache_serving,
    moe,
    pd_disaggregation,
    prefill_decode,
    quantization,
    sampling,
    speculative_decoding,
    tensor_parallel,
)
from sim.questions.question import Question

# In the order the single module they came from held them: the predict widget's default question is the first.
LESSONS = (inference_vs_training, prefill_decode, kv_cache_serving, pd_disaggregation, speculative_decoding,
           quantization, attention_variants, sampling, tensor_parallel, moe)


def _gathered(lessons) -> dict[str, Question]:
    """Every lesson's questions by key; a key two lessons both use fails the import, naming both."""
    found: dict[str, Question] = {}
    where: dict[str, str] = {}
    for lesson in lessons:
        for q in lesson.QUESTIONS:
            if q.key in found:
                raise ValueError(f"question {q.key!r} is in both {where[q.key]} and {lesson.__name__}")
            found[q.key], where[q.key] = q, lesson.__name__
    return found


QUESTIONS = _gathered(LESSONS)
