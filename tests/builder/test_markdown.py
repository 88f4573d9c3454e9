"""Lesson Markdown extensions, checked against fixture files (title . input . expected .)."""

from pathlib import Path

import jinja2
import pytest

from builder.directives import LessonContext
from builder.markdown import make_markdown, render_lesson_markdown

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


def render(text: str, first_line: int = 1) -> tuple[str, list]:
    md, problems = make_markdown(), []
    ctx = LessonContext(lang="zh", templates=jinja2.Environment(),
                        render_markdown=lambda body, line: render_lesson_markdown(md, body, line, ctx, problems))
    return ctx.render_markdown(text, first_line), problems


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
