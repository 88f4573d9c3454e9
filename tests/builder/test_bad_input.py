"""Every class of bad lesson input fails the build with `file:line: message` (DESIGN.md §5)."""

import subprocess
import sys
from pathlib import Path

import pytest

import build
from builder.problems import BuildFailed

FRONT = "---\ntitle: 课\nslug: {slug}\norder: 1\nsummary: 摘要\nminutes: 5\n---\n"
BODY_LINE = 8  # first body line after FRONT
COURSE = "- slug: one\n  title: 一\n- slug: two\n  title: 二\n- slug: later\n  title: 以后\n"
TERMS = "peak:\n  zh: {name: 峰值, unit: FLOP/s, text: 每秒最多的运算。}\n  output: peak\n  control: hardware\n"


def write_lessons(root: Path, files: dict[str, str | bytes]) -> Path:
    lessons = root / "lessons"
    (lessons / "zh").mkdir(parents=True)
    (lessons / "course.yml").write_text(COURSE, encoding="utf-8")
    (lessons / "terms.yml").write_text(TERMS, encoding="utf-8")
    for name, content in files.items():
        path = lessons / "zh" / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return lessons


def problems_of(tmp_path: Path, files: dict[str, str | bytes]) -> list[tuple[str, int, str]]:
    lessons = write_lessons(tmp_path, files)
    with pytest.raises(BuildFailed) as failed:
        build.build(build.Paths(lessons=lessons, out=tmp_path / "_site"))
    assert not (tmp_path / "_site").exists()
    return [(p.path.name, p.line, p.message) for p in failed.value.problems]


def lesson(body: str, slug: str = "one") -> str:
    return FRONT.format(slug=slug) + body


def assert_one(problems, name: str, line: int, text: str):
    assert len(problems) == 1, problems
    assert problems[0][:2] == (name, line), problems
    assert text in problems[0][2], problems


def test_malformed_front_matter_yaml(tmp_path):
    problems = problems_of(tmp_path, {"a.md": "---\ntitle: [unclosed\nslug: one\n---\n"})
    assert_one(problems, "a.md", 3, "front matter is not valid YAML")


def test_front_matter_not_closed(tmp_path):
    assert_one(problems_of(tmp_path, {"a.md": "---\ntitle: x\n"}), "a.md", 1, "not closed by a line '---'")


def test_front_matter_missing_field(tmp_path):
    text = "---\ntitle: 课\norder: 1\nsummary: s\nminutes: 5\n---\n"
    assert_one(problems_of(tmp_path, {"a.md": text}), "a.md", 2, "front matter needs 'slug'")


def test_front_matter_wrong_type(tmp_path):
    text = lesson("x\n").replace("minutes: 5", "minutes: five")
    assert_one(problems_of(tmp_path, {"a.md": text}), "a.md", 6, "'minutes' must be int")


def test_duplicate_slug(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("x\n"), "b.md": lesson("y\n")})
    assert_one(problems, "b.md", 2, "slug 'one' is already used by")


def test_slug_not_in_course_plan(tmp_path):
    assert_one(problems_of(tmp_path, {"a.md": lesson("x\n", slug="nine")}), "a.md", 2, "not in course.yml")


def test_unknown_directive(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("段落\n\n::: sidebar\nx\n:::\n")})
    assert_one(problems, "a.md", BODY_LINE + 2, "unknown directive 'sidebar'")


def test_unknown_widget(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("::: widget rooflin\n:::\n")})
    assert_one(problems, "a.md", BODY_LINE, "unknown widget 'rooflin'; known:")


def test_widget_config_not_a_mapping(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("::: widget roofline\n- T\n:::\n")})
    assert_one(problems, "a.md", BODY_LINE + 1, "widget settings must be a mapping")


def test_widget_config_unknown_parameter(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("::: widget roofline\nT: 4\nbatch: 2\n:::\n")})
    assert_one(problems, "a.md", BODY_LINE + 2, "unknown parameter 'batch'")


def test_widget_config_out_of_range(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("::: widget roofline\nB: 2000\n:::\n")})
    assert_one(problems, "a.md", BODY_LINE + 1, "B must be a whole number from 1 to 1,024, got 2000")


def test_unknown_preset_key(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("::: widget roofline\nhardware: h900\n:::\n")})
    assert_one(problems, "a.md", BODY_LINE + 1, "hardware must be one of a100-sxm-80gb")


def test_unknown_formula_term(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("::: formula\nt = \\term{speed}{v}\n:::\n")})
    assert_one(problems, "a.md", BODY_LINE + 1, "unknown term 'speed'; known: peak")


def test_formula_names_a_widget_not_on_the_page(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("::: formula roofline\nt = \\term{peak}{\\pi}\n:::\n")})
    assert_one(problems, "a.md", BODY_LINE, "widget id 'roofline', which is not on this page")


def test_latex_that_cannot_render(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("文字\n\n$\\left( x$\n")})
    assert_one(problems, "a.md", BODY_LINE + 2, "cannot render LaTeX")


def test_latex_rendered_as_literal_text(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("$\\htmlClass{x}{y}$\n")})
    assert_one(problems, "a.md", BODY_LINE, "LaTeX command \\htmlClass is not supported")


def test_link_to_unknown_lesson(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("[下一课](lesson:tow)\n")})
    assert_one(problems, "a.md", BODY_LINE, "link to lesson 'tow', which is not in lessons/course.yml")


def test_anchor_missing_on_this_page(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("## 标题 {#x}\n\n[跳](#nowhere)\n")})
    assert_one(problems, "a.md", BODY_LINE + 2, "#nowhere is not an id on this page")


def test_anchor_missing_on_another_lesson(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("[看](lesson:two#faq)\n"),
                                      "b.md": lesson("{#intro}\n## 开头\n", slug="two")})
    assert_one(problems, "a.md", BODY_LINE, "#faq is not an id on lesson 'two'")


def test_relative_link(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("[看](../two/)\n")})
    assert_one(problems, "a.md", BODY_LINE, "link to another lesson with lesson:SLUG")


def test_inline_expression_that_fails(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("约 {sim}`ms(decode(anchor, h100, batch=1, context=-4).time_s)`\n")})
    assert_one(problems, "a.md", BODY_LINE, "context must be a whole number from 0")


def test_lesson_not_utf8(tmp_path):
    problems = problems_of(tmp_path, {"a.md": lesson("中文\n").encode("gb18030")})
    assert_one(problems, "a.md", 1, "not UTF-8 text")


def test_check_reports_every_problem_at_once(tmp_path):
    lessons = write_lessons(tmp_path, {
        "a.md": lesson("$\\nope$\n\n::: widget roofline\nT: 0\nB: 0\n:::\n\n[x](lesson:zzz)\n"),
        "b.md": "no front matter\n",
    })
    result = subprocess.run([sys.executable, "build.py", "check", "--lessons", str(lessons)],
                            cwd=build.ROOT, capture_output=True, text=True)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if ".md:" in line]
    located = [line.split(": ", 1)[0].rsplit("/", 1)[-1] for line in lines]
    assert located == ["b.md:1", f"a.md:{BODY_LINE}", f"a.md:{BODY_LINE + 3}", f"a.md:{BODY_LINE + 4}",
                       f"a.md:{BODY_LINE + 7}"], result.stderr
    assert "5 problem(s)" in result.stderr
