"""Lesson Markdown extensions, checked against fixture files in markdown-it-py's format (title . input . expected .)."""

import dataclasses
from pathlib import Path

import jinja2
import pytest
from markdown_it.utils import read_fixture_file

import build
from builder.catalogs import load_catalog
from builder.context import LessonContext
from builder.course import Course
from builder.evolution import load_maps
from builder.expressions import namespace
from builder.frozen import Frozen
from builder.lessons import SourceLesson
from builder.markdown import make_markdown, render_lesson_markdown
from builder.mathml import split_lines, to_mathml
from builder.terms import Term

FIXTURES = Path(__file__).parent / "fixtures"
DEMO = SourceLesson(Path("demo.md"), "zh", "demo", "演示课", "s", 5, "", 1)
# demo is written in Chinese only; later is planned in both languages. The evolution maps: fixtures/evolution/.
PLAN = ("demo", "later")
MAPS, MAP_PROBLEMS = load_maps(FIXTURES / "evolution", ("zh", "en"), PLAN)
COURSE = Course(PLAN, {("zh", "demo"): DEMO},
                {("zh", "later"): "以后的课", ("en", "demo"): "Demo", ("en", "later"): "Later"}, MAPS)
TERMS = {
    "peak": Term("peak", output="peak", control="hardware", words={
        "zh": {"name": "峰值算力", "unit": "FLOP/s", "text": "每秒最多做多少次浮点运算。"},
        "en": {"name": "peak compute", "unit": "FLOP/s", "text": "The most operations per second."}}),
}


def ui(lang: str) -> dict:
    return load_catalog(build.Paths.catalogs / f"{lang}.yml", lang)[0].tree()


def make_context(problems: list, lang: str = "zh", course: Course = COURSE) -> LessonContext:
    md = make_markdown()
    ctx = LessonContext(lang=lang, slug="demo", templates=jinja2.Environment(), course=course, terms=TERMS,
                        ui=ui(lang), names=namespace(), frozen=Frozen(None, None))
    ctx.render_markdown = lambda body, line: render_lesson_markdown(md, body, line, ctx, problems)
    return ctx


def render(text: str, first_line: int = 1, lang: str = "zh", course: Course = COURSE) -> tuple[str, list]:
    problems = []
    return make_context(problems, lang, course).render_markdown(text, first_line), problems


def test_the_fixture_maps_load():
    assert MAP_PROBLEMS == [] and set(MAPS) == {"zh", "en"}


@pytest.mark.parametrize("line, title, source, expected", read_fixture_file(FIXTURES / "markdown.txt"),
                         ids=[c[1] for c in read_fixture_file(FIXTURES / "markdown.txt")])
def test_fixture(line, title, source, expected):
    html, problems = render(source)
    assert problems == []
    assert html == expected


@pytest.mark.parametrize("line, title, source, expected", read_fixture_file(FIXTURES / "markdown-en.txt"),
                         ids=[c[1] for c in read_fixture_file(FIXTURES / "markdown-en.txt")])
def test_fixture_on_an_english_page(line, title, source, expected):
    html, problems = render(source, lang="en")
    assert problems == []
    assert html == expected


@pytest.mark.parametrize("source, line, message", [
    ("text\n\n$\\foo x$\n", 3, "LaTeX command \\foo is not supported"),
    ("$$\n\\left( a\n$$\n", 1, "cannot render LaTeX"),
    ("a\n\n::: nosuch\nx\n:::\n", 3, "unknown directive 'nosuch'"),
    ("::: details 摘要\nnever closed\n", 1, "directive 'details' is not closed"),
    ("::: details\nx\n:::\n", 1, "details needs a summary"),
    ("::: widget nosuch\n:::\n", 1, "unknown widget 'nosuch'"),
    ("::: widget roofline\nT: 0\n:::\n", 2, "widget roofline: T must be a whole number from 1 to 32,768"),
    ("::: widget roofline\nB: 2\nspeed: 3\n:::\n", 3, "unknown parameter 'speed'"),
    ("::: widget roofline\n- 1\n:::\n", 2, "widget settings must be a mapping"),
    ("::: widget roofline\nT: [\n:::\n", 2, "not valid YAML"),
    ("a\nb {sim}`ms(decode(anchor, h100, batch=0, context=4).time_s)`\n", 1,
     "failed: ValueError: batch must be a whole number from 1"),
    ("{sim}`decode(anchor, h100, batch=1, context=4).time_s`\n", 1, "format numbers with a formatter"),
    ("{sim}`nosuch(1)`\n", 1, "NameError"),
    ("{sim}`1 +`\n", 1, "is not valid Python"),
    ("x\n\n[next](lesson:nope)\n", 3, "link to lesson 'nope', which is not in lessons/course.yml"),
    ("::: formula\n\\term{nope}{x}\n:::\n", 2, "unknown term 'nope'; known: peak"),
    ("::: formula\nx = y\n:::\n", 1, "needs at least one \\term"),
    ("::: callout oops\nx\n:::\n", 1, "callout kind must be one of"),
    ("::: evolution\n- name: a\n:::\n", 1, "::: evolution takes no arguments and no body: the map is written once"),
    ("a\n\n::: evolution here\n:::\n", 3, "::: evolution takes no arguments and no body"),
    # Links worded as the previous or next lesson follow lessons/course.yml (here: demo, then later).
    ("[上一课](lesson:later)\n", 1, "[上一课](lesson:later) is worded as the previous lesson ('上一课'), but 'demo' is "
                                 "the first lesson of lessons/course.yml"),
    ("x\n\n下一课讲别的：[这个](lesson:demo)\n", 3, "is worded as the next lesson ('下一课'), but the lesson after "
                                              "'demo' in lessons/course.yml is 'later': link lesson:later"),
    ("第一行\n第二行，[下一课](lesson:demo#x)\n", 2, "the lesson after 'demo' in lessons/course.yml is 'later'"),
    ("| a |\n|---|\n| [前一课](lesson:later) |\n", 3, "worded as the previous lesson ('前一课')"),
    ("::: details 问\n[后一课](lesson:demo)\n:::\n", 2, "worded as the next lesson ('后一课')"),
    # A teaser (after →) points ahead, by the lesson's title; a title or its head names only its own lesson.
    ("下一步呢？→ [以后](lesson:later)\n", 1, "a teaser's link (after →) names its lesson by its title: "
                                           "[以后](lesson:later) should read [以后的课]"),
    ("问题？→ [演示课](lesson:demo)\n", 1, "a teaser (after →) points ahead in the course, but 'demo' is this lesson"),
    ("见[演示课](lesson:later)。\n", 1, "[演示课](lesson:later) links 'later' by the title of 'demo'"),
    (":::: details outer\n::: details inner\nx\n::::\n", 2, "directive 'details' is not closed"),
    ("::: widget roofline id=a.b\n:::\n", 1, "widget id 'a.b' must start with a letter"),
    ("::: answer\nx\n:::\n", 1, "answer names the question box it answers"),
    ("a\n\n::: answer q1\nx\n:::\n", 3, "no widget with that id above it on this page"),
    # Markup the page's Content-Security-Policy would block, wherever it comes from.
    ("a\n\n<script>alert(1)</script>\n", 3, "raw <script> is not allowed"),
    ("a <span onclick=\"alert(1)\">b</span>\n", 1, "event-handler attribute onclick="),
    ("<div\n  onmouseover='x()'>b</div>\n", 1, "event-handler attribute onmouseover="),
    ("[x](javascript:alert(1))\n", 1, "javascript: URL"),
    ('<a href="java&#x09;script:alert(1)">x</a>\n', 1, "javascript: URL in href="),
    ("[text]{onclick=\"alert(1)\"}\n", 1, "event-handler attribute onclick="),
    ("a\n\n{#x onload=go}\n## h\n", 3, "event-handler attribute onload="),
    ("$\\href{javascript:alert(1)}{x}$\n", 1, "javascript: URL in href="),
    ("$\\text{<script>}$\n", 1, "raw <script> is not allowed"),
    ("$\\text{<b>}$\n", 1, "<b> inside math"),
])
def test_problems_name_their_line(source, line, message):
    _, problems = render(source, first_line=1)
    assert len(problems) == 1
    assert problems[0].line == line
    assert message in problems[0].message


@pytest.mark.parametrize("source, lang", [
    ("[下一课](lesson:later)讲它。\n", "zh"),
    ("下一课问一个问题。它是什么？→ [以后的课](lesson:later)\n", "zh"),  # after the arrow, the question mark ends nothing
    ("再往后一课：[以后的课](lesson:later)\n", "zh"),  # 往后一课 is "a lesson further on", not the next one
    ("The [next lesson](lesson:later) asks it.\n", "en"),
    ("The next lesson asks why. What then? → [Later](lesson:later)\n", "en"),
    ("This is the last lesson of the course, and [Later](lesson:later) is planned.\n", "en"),
    ("The next lesson is later. See [the demo](lesson:demo) again.\n", "en"),  # another sentence's words
])
def test_links_worded_as_the_course_has_it_pass(source, lang):
    _, problems = render(source, lang=lang)
    assert problems == []


def test_a_problem_in_the_evolution_map_names_the_map_and_its_line(tmp_path):
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "evolution.yml").write_text(
        "intro: 地图。\nitems:\n  - name: a\n    lesson: demo\n    solved: 好\n"
        "    stuck: \"{sim}`ms(decode(anchor, h100, batch=0, context=4).time_s)`\"\n", encoding="utf-8")
    maps, found = load_maps(tmp_path, ("zh",), PLAN)
    assert found == []
    _, problems = render("x\n\n::: evolution\n:::\n", course=Course(PLAN, {}, {}, maps))
    assert [p.line for p in problems] == [3]
    assert problems[0].message.startswith(f"in the evolution map, {tmp_path.name}/zh/evolution.yml:6: ")
    assert "batch must be a whole number from 1" in problems[0].message


def test_the_evolution_map_needs_a_step_of_this_lesson_and_a_map_in_this_language():
    chart = MAPS["zh"]
    without = dataclasses.replace(chart, items=tuple(item for item in chart.items if item.lesson != "demo"))
    _, problems = render("::: evolution\n:::\n", course=Course(PLAN, {}, {}, {"zh": without}))
    assert [p.line for p in problems] == [1]
    assert "no item of evolution/zh/evolution.yml has lesson: demo" in problems[0].message
    _, problems = render("::: evolution\n:::\n", lang="en", course=Course(PLAN, {}, {}, {"zh": chart}))
    assert "there is no en evolution map: write lessons/en/evolution.yml" in problems[0].message


def test_the_steps_of_this_lesson_are_marked_and_the_others_link_their_lessons():
    written = Course(PLAN, {("zh", "demo"): DEMO, ("zh", "later"): DEMO}, {}, MAPS)
    html, problems = render("::: evolution\n:::\n", course=written)
    assert problems == []
    assert html.count('class="generation here"') == 1 and html.count('aria-current="step"') == 1
    assert '<a class="generation-name" href="../later/">以后</a>' in html and "upcoming" not in html

    _, problems = render("x\n\n$\\nope$\n", first_line=8)
    assert problems[0].line == 10


def test_every_problem_is_reported_not_only_the_first():
    _, problems = render("$\\aa$\n\n$\\bb$\n\n::: nope\n:::\n")
    assert [p.line for p in problems] == [1, 3, 5]


def test_every_bad_widget_setting_is_reported():
    _, problems = render("::: widget roofline\nT: 0\nB: 9999\nspeed: 3\n:::\n")
    assert [(p.line, p.message.split(":")[1].strip()[:5]) for p in problems] == [(2, "T mus"), (3, "B mus"), (4, "unkno")]


@pytest.mark.parametrize("href", ["../demo/", "demo/index.html", "/demo/", "ftp://x"])
def test_relative_and_script_links_are_refused(href):
    _, problems = render(f"[x]({href})\n")
    assert problems and "lesson:SLUG" in problems[0].message


@pytest.mark.parametrize("latex, lines", [
    (r"a", [r"a"]),
    (r"a \quad \\ b \\ c", [r"a \quad", r"b", r"c"]),
    (r"\term{x}{a \\ b} \\ c", [r"\term{x}{a \\ b}", r"c"]),
    (r"\begin{matrix} a \\ b \end{matrix} \\ c \{ \\ d", [r"\begin{matrix} a \\ b \end{matrix}", r"c \{", r"d"]),
    (r"a \\", [r"a"]),
])
def test_a_display_formula_breaks_into_lines_only_at_its_top_level(latex, lines):
    assert split_lines(latex) == lines


def test_a_formula_has_no_row_around_the_whole_of_it():
    """latex2mathml's <mrow> around a whole formula draws nothing (<math> is a row): it goes, the inner rows stay."""
    inline = to_mathml(r"I = \mathrm{FLOPs}/\mathrm{bytes}", False, 1)
    assert inline.startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mi>I</mi>')
    assert inline.count("<mrow>") == inline.count("</mrow>") == 2  # FLOPs and bytes, each one word
    grouped = to_mathml("{a}+{b}", False, 1)
    assert grouped.endswith("<mrow><mi>b</mi></mrow></math>") and grouped.count("<mrow>") == 2
    lines = to_mathml(r"a \\ b", True, 1)
    assert lines.count('<mrow class="math-line">') == 2 and "<mrow>" not in lines
