"""What a "predict, then check" question is, and how a student's guess is graded. The questions themselves are
in one module per lesson beside this one (sim/questions/<lesson>.py), each with its words in that module's TEXT.

A lesson asks the question in its own words and names it by key (`::: widget predict` with
`question: KEY`); the student's number is graded against `Answer.value` with a relative tolerance. Each
question's derivation is its TEXT entry (same key) in the page's language, filled with the numbers its
compute function gives.

A question also lists its common mistakes: each computes its wrong value from the same numbers (never a
typed figure) and has its words in TEXT under "QUESTION.mistake.KEY", a sentence that names the mistake
and gives the right reasoning. A guess within tolerance of the answer is right; otherwise one within the
same relative tolerance of a mistake's value names that mistake (the nearest, if several; two mistakes closer
together than that tolerance each get a narrower window of their own, so neither swallows the other); otherwise
it is too high or too low. Tolerances are tighter than the gap to every mistake, so a mistake is never right.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from sim.physics import presets

PERCENT = 100  # a fraction as a percentage


@dataclass(frozen=True)
class Answer:
    value: float
    derivation: str  # the formula with the numbers filled in


@dataclass(frozen=True)
class Mistake:
    """A common wrong answer: its words are TEXT["QUESTION.mistake.KEY"]."""

    key: str
    value: Callable[[dict], float]  # the wrong value, from the same numbers as the question's derivation
    # Its own window, narrower than the question's tolerance, when two mistakes lie closer together than that
    # tolerance: otherwise one window swallows the other's value and its neighbourhood (None: the question's).
    tolerance: float | None = None


@dataclass(frozen=True)
class Grade:
    """How a guess is graded."""

    answer: Answer
    error: float  # relative error of the guess against the answer
    correct: bool
    mistake: int | None  # index in Question.mistakes of the mistake the guess matches, if it is not right
    feedback: str  # that mistake's sentence, filled with the question's numbers ("" if none)
    # A unit slip, when the guess is neither right nor a named mistake but is right once multiplied or divided by one
    # of SLIPS: the factor by which the guess is off (1,000: a thousand times too high; 1 / 1,000: too low).
    slip: float | None = None


# The factors of a slipped unit: a percentage written as a fraction (or the reverse), a thousand (ms for s, KB for MB),
# a binary thousand (KiB for KB).
SLIPS = (100, 1_000, 1_024)


@dataclass(frozen=True)
class Question:
    key: str  # also the key of its derivation in its words (`text`)
    unit: str  # shown beside the student's input, so the question's unit is never a trap
    tolerance: float  # accepted relative error, e.g. 0.1 = within 10%
    compute: Callable[[], tuple[float, dict]]  # the answer, and the numbers its derivation shows
    mistakes: tuple[Mistake, ...] = ()
    # Its words, {lang: {key: text}}: the TEXT of the lesson module that asks it, given by ask().
    text: Mapping[str, Mapping[str, str]] = field(default_factory=dict, repr=False, compare=False)

    def answer(self, lang: str) -> Answer:
        """The answer, derived in `lang`'s words."""
        value, numbers = self.compute()
        return Answer(value, self.text[lang][self.key].format(**numbers))

    def mistake_values(self) -> tuple[float, ...]:
        """Each mistake's wrong value, in the order of `mistakes`."""
        _, numbers = self.compute()
        return tuple(m.value(numbers) for m in self.mistakes)

    def mistake_text(self, index: int, lang: str) -> str:
        """Mistake `index`'s sentence in `lang`, filled with the question's numbers and the wrong value."""
        _, numbers = self.compute()
        return self._words(index, numbers, lang)

    def _words(self, index: int, numbers: dict, lang: str) -> str:
        m = self.mistakes[index]
        return self.text[lang][f"{self.key}.mistake.{m.key}"].format(**numbers, mistake=m.value(numbers))

    def grade(self, guess: float, lang: str) -> Grade:
        """Right within tolerance; otherwise the nearest mistake within the same relative tolerance of its
        value (or the mistake's own, narrower one), if any; otherwise just wrong (the sign of `error` says too
        high or too low)."""
        value, numbers = self.compute()
        answer = Answer(value, self.text[lang][self.key].format(**numbers))
        error = (guess - value) / value
        if abs(error) <= self.tolerance:
            return Grade(answer, error, True, None, "")
        # a mistake whose value is 0 ("paging wastes nothing") matches only 0 itself
        near = [(abs(guess - wrong) / abs(wrong) if wrong else 0.0, i) for i, m in enumerate(self.mistakes)
                for wrong in (m.value(numbers),)
                if abs(guess - wrong) <= (self.tolerance if m.tolerance is None else m.tolerance) * abs(wrong)]
        if not near:
            return Grade(answer, error, False, None, "", self._slip(guess, value))
        index = min(near)[1]
        return Grade(answer, error, False, index, self._words(index, numbers, lang))


    def _slip(self, guess: float, value: float) -> float | None:
        """The factor of SLIPS (or its inverse) that brings the guess within tolerance of the answer, the closest if
        two do (1,000 and 1,024 are 2.4% apart); None if none does."""
        found = [(abs(guess / factor - value), factor) for f in SLIPS for factor in (f, 1 / f)
                 if abs(guess / factor - value) <= self.tolerance * abs(value)]
        return min(found)[1] if found and value else None


def ask(text: Mapping[str, Mapping[str, str]], *questions: Question) -> tuple[Question, ...]:
    """A lesson's questions, each with its words: the TEXT of the lesson's module (sim/questions/<lesson>.py)."""
    return tuple(replace(q, text=text) for q in questions)


def anchor_h100():
    """The course's anchor model on an H100, which more than one lesson asks about."""
    return presets.model("qwen3.8-27b"), presets.hardware("h100-sxm")
