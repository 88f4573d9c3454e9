"""A formula term's button names its symbol: the student who cannot click inside the formula (a keyboard, a
screen reader) must still learn which letter the button stands for."""

from __future__ import annotations

import re

import pytest

import build
from sim.page.languages import LANGUAGES

SOURCES = build.load_sources(build.Paths())[0]
SYMBOLS = {r"\pi": "π", r"\beta": "β"}  # LaTeX letters as they print


def symbol(latex: str) -> str | None:
    """The printed symbol of a term that is one letter, optionally barred (\\bar{K} prints K̄); None otherwise."""
    barred = re.fullmatch(r"\\bar\{(\w)\}", latex)
    if barred:
        return barred.group(1) + "\u0304"
    latex = SYMBOLS.get(latex, latex)
    return latex if len(latex) == 1 else None


def one_letter_terms(lang: str) -> set[tuple[str, str]]:
    terms = set()
    for lesson in SOURCES.lessons:
        if lesson.lang == lang:
            for key, latex in re.findall(r"\\term\{(\w+)\}\{(\\bar\{\w\}|\\?\w+)\}", lesson.body):
                if symbol(latex):
                    terms.add((key, symbol(latex)))
    return terms


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_one_letter_terms_name_ends_with_its_symbol(lang):
    terms = one_letter_terms(lang)
    assert ("kv_per_request", "K\u0304") in terms
    for key, printed in terms:
        name = SOURCES.terms[key].for_page(lang)["name"]
        assert name.endswith(printed), (key, name, printed)
