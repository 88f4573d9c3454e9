"""A sub- or superscript a student reads is drawn as one, never typed raw as LaTeX's d_h^R: in a lesson it is
inline math ($d_h^R$, MathML on the page), in a widget's or a question's words (plain text) it is Unicode where
Unicode has the letter (2ⁿ) and words where it has not (no subscript c or g exists: "the latent's width")."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "lessons").glob("*/*.md"))
SIM_MODULES = sorted(p for p in (ROOT / "sim").rglob("*.py") if "__pycache__" not in p.parts)

# A one-letter base with a subscript or superscript typed as LaTeX: d_h, n_g, s_j, d_h^R, 2^b, a_j^α. Names of
# more than one letter (min_p, weight_dtype) are settings and code, written as such.
RAW = re.compile(r"(?<![\w\\])[A-Za-z0-9]_\{?[A-Za-z0-9]|(?<![\w\\])[A-Za-z0-9)]\^\{?[A-Za-z0-9α-ω(]")
# What a lesson line may hold that is not prose: math, code, {sim} expressions, link targets and addresses.
NOT_PROSE = re.compile(r"\{sim\}`[^`]*`|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\]\([^)]*\)|https?://\S+")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def prose_lines(path: Path):
    """(line number, prose) of a lesson, without its widgets' and questions' settings blocks."""
    in_settings = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith(":::"):
            in_settings = line.split()[1:2] in (["widget"], ["predict"])
            continue
        if not in_settings:
            yield number, NOT_PROSE.sub(" ", line)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_lesson_writes_scripts_as_math(path):
    raw = [f"{path.parent.name}/{path.name}:{n}: {RAW.findall(text)}" for n, text in prose_lines(path)
           if RAW.search(text)]
    assert raw == [], "write these as inline math ($d_h^R$):\n" + "\n".join(raw)


def texts(module) -> list[tuple[str, str, str]]:
    """(language, key, words) of a sim module's TEXT, placeholders dropped."""
    return [(lang, key, PLACEHOLDER.sub("", words)) for lang, block in getattr(module, "TEXT", {}).items()
            for key, words in block.items() if isinstance(words, str)]


@pytest.mark.parametrize("path", SIM_MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_widgets_words_write_no_raw_scripts(path):
    module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
    raw = [f"{lang} {key}: {RAW.findall(words)}" for lang, key, words in texts(module) if RAW.search(words)]
    assert raw == [], "write these in Unicode (2ⁿ) or in words (the latent's width):\n" + "\n".join(raw)


def test_the_attention_lesson_writes_the_decoupled_key_as_math():
    en = (ROOT / "lessons/en/attention-variants.md").read_text(encoding="utf-8")
    assert "$(d_c + d_h^R) L$" in en and "d_h^R" not in NOT_PROSE.sub("", en)
