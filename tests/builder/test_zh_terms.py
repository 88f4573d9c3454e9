"""The Chinese pages name the prompt (a request's input text) one way, 提示, as most of their sentences do: not
「prompt」 in some places and 「提示词」 in others. 提示 in its other sense (a hint) is left as it is."""

from __future__ import annotations

import importlib
import re

import pytest

from tests.builder.test_notation import ROOT, SIM_MODULES, prose_lines

OTHER_NAMES = re.compile(r"(?i)(?<![\w{.])prompt(?![\w}.=])|提示词")
NOT_PROSE = re.compile(r"\{sim\}`[^`]*`|\{claim\}`[^`]*`|`[^`]*`|\]\([^)]*\)|https?://\S+|\{[^{}]*\}")
ZH_FILES = sorted((ROOT / "lessons" / "zh").glob("*.md"))
ZH_DATA = [*sorted((ROOT / "lessons" / "zh").glob("*.yml")), ROOT / "site" / "i18n" / "zh.yml"]


@pytest.mark.parametrize("path", ZH_FILES, ids=lambda p: p.name)
def test_a_chinese_lesson_calls_the_prompt_ti_shi(path):
    found = [f"{path.name}:{n}: {OTHER_NAMES.findall(NOT_PROSE.sub(' ', text))}"
             for n, text in prose_lines(path) if OTHER_NAMES.search(NOT_PROSE.sub(" ", text))]
    assert found == [], "write 提示:\n" + "\n".join(found)


@pytest.mark.parametrize("path", ZH_DATA, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_chinese_catalogs_call_the_prompt_ti_shi(path):
    found = [f"{path.name}:{n}" for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if OTHER_NAMES.search(NOT_PROSE.sub(" ", line.partition(":")[2]))]
    assert found == [], "write 提示: " + ", ".join(found)


@pytest.mark.parametrize("path", SIM_MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_modules_chinese_words_call_the_prompt_ti_shi(path):
    module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
    words = getattr(module, "TEXT", {}).get("zh", {})
    found = [key for key, text in words.items() if isinstance(text, str) and OTHER_NAMES.search(NOT_PROSE.sub(" ", text))]
    assert found == [], f"write 提示 in TEXT['zh']: {found}"
