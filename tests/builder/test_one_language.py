"""An author may write a lesson in one language only: a widget's, a question's or a term's words are required in
the languages whose pages use it, the build succeeds, and it notes what a translation will need (builder/usage.py).
The same words missing where a page does use them still fail the build at the module's or catalog's line."""

from __future__ import annotations

import importlib
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

import build
from builder import stdlib
from builder.catalogs import check_text_blocks
from builder.lessons import SourceLesson
from builder.problems import BuildFailed
from builder.stdlib import trace_states
from builder.usage import Missing, scan, untranslated_note
from sim import widgets

WIDGET_NAME = "onelang-demo"
# A widget an author has written in English only: its TEXT has no zh block.
WIDGET_MODULE = '''"""A number, doubled."""

from sim.kit import Controls, Range, Readouts, Widget, output, view

TEXT = {
    "en": {"title": "Doubled", "n": "A number", "twice": "Twice the number"},
}

WIDGET = Widget(controls=(Range("n", default=2, min=1, max=10),), layout=(Controls(), Readouts("twice")))


def render(state) -> dict:
    s = WIDGET.coerce(state)
    return view(s, {"twice": output(2 * s["n"], str(2 * s["n"]))})
'''
FRONT = "---\ntitle: {title}\nsummary: {title}.\nminutes: 5\n---\n"
TERMS = "peak: {output: peak, control: hardware}\nspeed: {}\n"
PLAN = "- chapter: first\n  lessons:\n    - one\n    - two\n"
ZH_CATALOG = ("chapters:\n  first: {title: 第一章, summary: 这一章。}\nupcoming:\n  two: 第二课\n"
              "terms:\n  peak: {name: 峰值, unit: FLOP/s, text: 每秒最多的运算。}\n")
EN_CATALOG = ("chapters:\n  first: {title: First, summary: This chapter.}\n"
              "terms:\n  peak: {name: Peak, unit: FLOP/s, text: The most operations a second.}\n"
              "  speed: {name: Speed, unit: tok/s, text: Tokens a second.}\n")
# The English-only lesson: the widget, and a formula with a term whose words exist only in English.
EN_TWO = FRONT.format(title="Two") + ("\n::: widget onelang-demo id=d\nn: 3\n:::\n\n"
                                      "::: formula d\nv = \\term{speed}{v}\n:::\n")


@pytest.fixture
def english_widget(tmp_path, monkeypatch):
    """The widget module above, found by the builder's widgets package as if it were in sim/widgets/ (the real
    folder is shared by every test)."""
    folder = tmp_path / "widgets"
    folder.mkdir()
    path = folder / f"{WIDGET_NAME.replace('-', '_')}.py"
    path.write_text(WIDGET_MODULE, encoding="utf-8")
    known, states = widgets.names(), stdlib.trace_states()
    # The site's Python (the sim zip) does not hold the module: the standard library it needs is the course's.
    # (stdlib.trace_states itself leaves out the languages a widget has no words in: test below.)
    monkeypatch.setattr(stdlib, "trace_states", lambda: states)
    monkeypatch.setattr(widgets, "__path__", [*widgets.__path__, str(folder)])
    monkeypatch.setattr(widgets, "names", lambda: tuple(sorted((*known, WIDGET_NAME))))
    importlib.invalidate_caches()
    yield path
    sys.modules.pop(f"{widgets.__name__}.{path.stem}", None)


def write_lessons(root: Path, files: dict[str, str]) -> Path:
    lessons = root / "lessons"
    for name, text in {"course.yml": PLAN, "terms.yml": TERMS, "zh/catalog.yml": ZH_CATALOG,
                       "en/catalog.yml": EN_CATALOG, "zh/one.md": FRONT.format(title="一") + "\n好的课。\n",
                       "en/one.md": FRONT.format(title="One") + "\nA good lesson.\n", **files}.items():
        (lessons / name).parent.mkdir(parents=True, exist_ok=True)
        (lessons / name).write_text(text, encoding="utf-8")
    return lessons


def test_a_lesson_written_in_english_only_builds_and_says_what_a_translation_needs(english_widget, tmp_path, capsys):
    lessons = write_lessons(tmp_path, {"en/two.md": EN_TWO})
    out = tmp_path / "_site"
    assert build.main(["build", "--lessons", str(lessons), "--out", str(out), "--frozen", "read"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:] == ["zh: words missing for 1 widget and 1 term (widget onelang-demo; term speed), needed "
                           "when these lessons are translated: two"]
    page = (out / "en" / "two" / "index.html").read_text(encoding="utf-8")
    assert "Twice the number" in page and ">Speed</button>" in page
    # The page's widget is rendered in its own language, the one the browser's worker is sent (widget.js takes
    # no language from the URL); the switch to Chinese leads to the zh home page, where the lesson is upcoming.
    island = re.search(r'<script type="application/json" class="widget-data">(.*?)</script>', page, re.S)[1]
    assert json.loads(island)["state"] == {"n": 3, "lang": "en"}
    switch = re.search(r'<a [^>]*data-language-switch[^>]*>', page)[0]
    assert 'href="../../"' in switch and "data-sections" not in switch
    assert not (out / "two").exists()
    assert "第二课" in (out / "index.html").read_text(encoding="utf-8")


def test_the_course_translated_in_full_builds_with_no_note(tmp_path, capsys):
    lessons = write_lessons(tmp_path, {"zh/catalog.yml": ZH_CATALOG.replace("upcoming:\n  two: 第二课\n", "")
                                       + "  speed: {name: 速度, unit: tok/s, text: 每秒的 token 数。}\n",
                                       "zh/two.md": FRONT.format(title="二") + "\n::: formula\nv = \\term{speed}{v}\n"
                                                                               ":::\n",
                                       "en/two.md": FRONT.format(title="Two") + "\n::: formula\nv = "
                                                                                "\\term{speed}{v}\n:::\n"})
    assert build.main(["build", "--lessons", str(lessons), "--out", str(tmp_path / "_site"), "--frozen", "read"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1  # "built …", and nothing more


def test_the_widget_on_a_chinese_page_needs_its_chinese_words(english_widget, tmp_path):
    zh_two = FRONT.format(title="二") + "\n::: widget onelang-demo id=d\nn: 3\n:::\n"
    lessons = write_lessons(tmp_path, {"en/two.md": EN_TWO.replace("::: formula d\nv = \\term{speed}{v}\n:::\n", ""),
                                       "zh/two.md": zh_two,
                                       "zh/catalog.yml": ZH_CATALOG.replace("upcoming:\n  two: 第二课\n", "")})
    with pytest.raises(BuildFailed) as failed:
        build.build(build.Paths(lessons=lessons, out=tmp_path / "_site", frozen="read"))
    assert [str(p) for p in failed.value.problems] == [
        f"{english_widget}:5: TEXT has no 'zh' block: zh/two.md:7 uses widget onelang-demo"]


def test_a_term_on_a_chinese_page_needs_its_chinese_words(tmp_path):
    zh_two = FRONT.format(title="二") + "\n::: formula\nv = \\term{speed}{v}\n:::\n"
    lessons = write_lessons(tmp_path, {"zh/two.md": zh_two, "zh/catalog.yml": ZH_CATALOG.replace(
        "upcoming:\n  two: 第二课\n", ""), "en/two.md": FRONT.format(title="Two") + "\nNo formula.\n"})
    with pytest.raises(BuildFailed) as failed:
        build.build(build.Paths(lessons=lessons, out=tmp_path / "_site", frozen="read"))
    assert [(p.path.name, p.line, p.message) for p in failed.value.problems] == [
        ("catalog.yml", 3, "term 'speed' needs name, unit, text in zh")]


# --- sim/ modules' words, checked against a usage ---------------------------------------------------------------

def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def lesson(lang: str, slug: str, body: str) -> SourceLesson:
    return SourceLesson(Path(f"lessons/{lang}/{slug}.md"), lang, slug, slug, slug, 5, body, 6)


QUESTIONS = """\
    TEXT = {
        "zh": {
            "old": "旧 {n}",
            "old.mistake.x": "错 {n}",
        },
        "en": {
            "old": "Old {n}",
            "old.mistake.x": "Wrong {n}",
            "new": "New {n}",
            "new.mistake.y": "Wrong {n}",
        },
    }
    """
ASK = "::: widget predict id=q\nquestion: {key}\n:::\n"


def test_a_question_asked_only_in_english_needs_only_its_english_words(tmp_path):
    sim = tmp_path / "sim"
    write(sim / "questions" / "one.py", QUESTIONS)
    lessons = [lesson("zh", "one", ASK.format(key="old")), lesson("en", "one", ASK.format(key="old")),
               lesson("en", "two", ASK.format(key="new"))]
    missing: list[Missing] = []
    assert check_text_blocks(sim, scan(lessons), missing) == []
    assert untranslated_note(missing, scan(lessons), lessons) == [
        "zh: words missing for 1 question (question new), needed when these lessons are translated: two"]
    # Asked on a Chinese page too, its sentences are missing there: each is named at its English line.
    lessons.append(lesson("zh", "two", "Intro.\n\n::: details Why?\n" + ASK.format(key="new") + ":::\n"))
    found = [(p.line, p.message) for p in check_text_blocks(sim, scan(lessons))]
    assert found == [
        (9, "'new' is not a key of the default language's words (one.py); add it there or remove it"),
        (10, "'new.mistake.y' is not a key of the default language's words (one.py); add it there or remove it")]


def test_words_every_widget_shares_are_needed_in_each_language_with_a_widget_page(tmp_path):
    sim = tmp_path / "sim"
    write(sim / "kit" / "shared.py", 'TEXT = {"en": {"gpu": "GPU"}}\n')
    english = [lesson("zh", "one", "No widget.\n"), lesson("en", "one", "::: widget roofline\n:::\n")]
    missing: list[Missing] = []
    assert check_text_blocks(sim, scan(english), missing) == []
    assert untranslated_note(missing, scan(english), english) == [
        "zh: words missing for 1 module (module sim/kit/shared.py)"]
    chinese = [lesson("zh", "one", "::: widget roofline\n:::\n")]
    assert [p.message for p in check_text_blocks(sim, scan(chinese))] == [
        "TEXT has no 'zh' block: zh/one.md:6 uses widget roofline, and every widget uses these words"]


def test_a_directive_shown_in_a_code_block_uses_nothing():
    body = ("```markdown\n::: widget roofline\n:::\n```\n\n"
            ":::: callout note\n::: formula\nx = \\term{peak}{x}\n:::\n::::\n")
    used = scan([lesson("en", "one", body)])
    assert set(used.uses) == {("term", "peak")}
    assert str(used.first("term", "peak", "en")) == "en/one.md:13"


def test_the_standard_library_trace_draws_a_widget_only_in_the_languages_it_has_words_in(english_widget):
    states = [state for name, state in trace_states() if name == WIDGET_NAME]
    assert states == [{"lang": "en"}]
