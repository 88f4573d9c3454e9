"""Lesson Markdown extensions, checked against fixture files (title . input . expected .)."""

from pathlib import Path

import jinja2
import pytest

from builder.context import LessonContext
from builder.course import Course, PlannedLesson
from builder.expressions import namespace
from builder.markdown import make_markdown, render_lesson_markdown
from builder.terms import Term

FIXTURES = Path(__file__).parent / "fixtures"


def read_fixtures(path: Path) -> list[tuple[str, str, str]]:
    """markdown-it-py's fixture format: a title line, '.', input, '.', expected output, '.'."""
    cases, lines, i = [], path.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        title = lines[i]
        assert lines[i + 1] == ".", f"{path}:{i + 2}: expected '.'"
        end_input = lines.index(".", i + 2)
        end_expected = lines.index(".", end_input + 1)
        cases.append((title, "\n".join(lines[i + 2:end_input]) + "\n", "\n".join(lines[end_input + 1:end_expected]) + "\n"))
        i = end_expected + 1
    return cases


COURSE = Course((PlannedLesson("demo", "演示课", 1), PlannedLesson("later", "以后的课", 3)), frozenset({"demo"}))
TERMS = {
    "peak": Term("peak", {"zh": {"name": "峰值算力", "unit": "FLOP/s", "text": "每秒最多做多少次浮点运算。"}},
                 output="peak", control="hardware", line=1),
}


def make_context(problems: list) -> LessonContext:
    md = make_markdown()
    ctx = LessonContext(lang="zh", slug="demo", templates=jinja2.Environment(), course=COURSE, terms=TERMS,
                        names=namespace())
    ctx.render_markdown = lambda body, line: render_lesson_markdown(md, body, line, ctx, problems)
    return ctx


def render(text: str, first_line: int = 1) -> tuple[str, list]:
    problems = []
    return make_context(problems).render_markdown(text, first_line), problems


@pytest.mark.parametrize("title, source, expected", read_fixtures(FIXTURES / "markdown.txt"),
                         ids=[c[0] for c in read_fixtures(FIXTURES / "markdown.txt")])
def test_fixture(title, source, expected):
    html, problems = render(source)
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
