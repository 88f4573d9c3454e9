"""One home for each fact: words live in catalogs, never in branches of code; the page script restates
nothing Python knows (no scale maths, no strings)."""

import re
from pathlib import Path

import pytest

import build

CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef]")
LANGUAGE_BRANCH = re.compile(r"""lang\s*==\s*["']|["']zh["']\s+(?:if|else)|\bif\s+zh\b|\bzh\s+else\b|\bzh\s*=\s*lang""")


def files(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in build.ROOT.glob(pattern) if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", files("sim/**/*.py", "builder/**/*.py", "build.py", "site/templates/**/*.html",
                                       "site/static/js/*.js"), ids=lambda p: str(p.relative_to(build.ROOT)))
def test_no_code_branches_on_the_language(path):
    text = path.read_text(encoding="utf-8")
    assert not LANGUAGE_BRANCH.search(text), f"{path}: words per language belong in a catalog or TEXT"


@pytest.mark.parametrize("path", files("site/templates/**/*.html", "site/static/js/*.js"),
                         ids=lambda p: str(p.relative_to(build.ROOT)))
def test_templates_and_page_script_hold_no_words_of_a_language(path):
    found = CJK.findall(path.read_text(encoding="utf-8"))
    assert not found, f"{path} holds Chinese text {''.join(found[:12])!r}: put it in site/i18n/ or the widget's TEXT"


@pytest.mark.parametrize("path", files("site/static/js/*.js"), ids=lambda p: p.name)
def test_the_page_script_does_no_scale_or_simulator_maths(path):
    text = path.read_text(encoding="utf-8")
    for forbidden in ("Math.log", "Math.pow", "Math.exp", "**", "SLIDER_STEPS"):
        assert forbidden not in text, f"{path.name} computes what Python renders ({forbidden})"
