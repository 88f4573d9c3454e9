"""Lesson Markdown extensions, checked against fixture files in markdown-it-py's format (title . input . expected .)."""

from pathlib import Path

import jinja2
import pytest
from markdown_it.utils import read_fixture_file

import build
from builder.catalogs import load_catalog
from builder.context import LessonContext
from builder.course import Course
from builder.expressions import namespace
from builder.frozen import Frozen
from builder.lessons import SourceLesson
from builder.markdown import make_markdown, render_lesson_markdown
from builder.mathml import split_lines, to_mathml
from builder.terms import Term

FIXTURES = Path(__file__).parent / "fixtures"
DEMO = SourceLesson(Path("demo.md"), "zh", "demo", "演示课", "s", 5, "", 1)
# demo is written in Chinese only; later is planned in both languages.
COURSE = Course(("demo", "later"), {("zh", "demo"): DEMO},
                {("zh", "later"): "以后的课", ("en", "demo"): "Demo", ("en", "later"): "Later"})
TERMS = {
    "peak": Term("peak", output="peak", control="hardware", words={
        "zh": {"name": "峰值算力", "unit": "FLOP/s", "text": "每秒最多做多少次浮点运算。"},
        "en": {"name": "peak compute", "unit": "FLOP/s", "text": "The most operations per second."}}),
}


def ui(lang: str) -> dict:
    return load_catalog(build.Paths.catalogs / f"{lang}.yml", lang)[0].tree()


def make_context(problems: list, lang: str = "zh") -> LessonContext:
    md = make_markdown()
    ctx = LessonContext(lang=lang, slug="demo", templates=jinja2.Environment(), course=COURSE, terms=TERMS,
                        ui=ui(lang), names=namespace(), frozen=Frozen(None, None))
    ctx.render_markdown = lambda body, line: render_lesson_markdown(md, body, line, ctx, problems)
    return ctx


def render(text: str, first_line: int = 1, lang: str = "zh") -> tuple[str, list]:
    problems = []
    return make_context(problems, lang).render_markdown(text, first_line), problems


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
    ("::: evolution\n- name: a\n  lesson: nope\n  solved: s\n  stuck: t\n:::\n", 2, "lesson 'nope' is not in"),
    ("::: evolution\n- name: a\n:::\n", 2, "generation 1 needs exactly name, lesson, solved, stuck"),
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


def test_line_numbers_count_from_the_lesson_body():
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
