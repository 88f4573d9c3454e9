"""Every class of bad lesson input fails the build with `file:line: message` and exit status 2, and leaves
the previous site untouched (ARCHITECTURE.md, "Bad input")."""

import os
import re
import shutil
from pathlib import Path

import pytest

import build

FRONT = "---\ntitle: 课\nsummary: 摘要\nminutes: 5\n---\n"
BODY_LINE = 6  # first body line after FRONT
PLAN = ("one", "two", "later")
CHAPTERS = {"first": PLAN[:2], "then": PLAN[2:]}
PLAN_TEXT = "".join(f"- chapter: {chapter}\n  lessons:\n" + "".join(f"    - {slug}\n" for slug in slugs)
                    for chapter, slugs in CHAPTERS.items())
CHAPTER_WORDS = "chapters:\n" + "".join(f"  {chapter}: {{title: {chapter}, summary: 这一章。}}\n" for chapter in CHAPTERS)
TERMS = "peak: {output: peak, control: hardware}\n"
TERM_WORDS = "terms:\n  peak: {name: 峰值, unit: FLOP/s, text: 每秒最多的运算。}\n"
PROBLEM = re.compile(r"^(.*?):(\d+): (.*)$")


def lesson(body: str) -> str:
    return FRONT + body


def write_lessons(root: Path, files: dict[str, str | bytes]) -> Path:
    """A lessons folder: the plan, the glossary, and `files` (paths under lessons/, default zh/); each language
    folder gets a catalog with titles for the planned lessons not written in it, unless a test writes one."""
    lessons = root / "lessons"
    lessons.mkdir(parents=True)
    (lessons / "course.yml").write_text(PLAN_TEXT, encoding="utf-8")
    (lessons / "terms.yml").write_text(TERMS, encoding="utf-8")
    for name, content in files.items():
        path = lessons / (name if "/" in name else f"zh/{name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    for folder in (p for p in lessons.iterdir() if p.is_dir()):
        catalog = folder / "catalog.yml"
        if not catalog.exists():
            upcoming = [s for s in PLAN if not (folder / f"{s}.md").exists()]
            catalog.write_text(("upcoming:\n" + "".join(f"  {s}: {s}\n" for s in upcoming) if upcoming else "")
                               + TERM_WORDS + CHAPTER_WORDS, encoding="utf-8")
    return lessons


@pytest.fixture(scope="module")
def previous_site(tmp_path_factory) -> Path:
    """A good site, built once: every failing build below must leave a copy of it exactly as it was."""
    root = tmp_path_factory.mktemp("previous")
    out = root / "_site"
    build.build(build.Paths(lessons=write_lessons(root, {"one.md": lesson("好的课。\n")}), out=out))
    return out


def snapshot(site: Path) -> dict:
    return {p.relative_to(site): (p.stat().st_ino, p.stat().st_mtime_ns) for p in site.rglob("*")}


def failing_build(tmp_path: Path, previous_site: Path, capsys, **paths) -> list[tuple[str, int, str]]:
    """Build with the CLI's entry point; it must exit 2 and keep the previous site. Returns (file, line, message)."""
    out = tmp_path / "_site"
    shutil.copytree(previous_site, out, copy_function=os.link)
    before = snapshot(out)
    if paths:
        with pytest.raises(build.BuildFailed) as failed:
            build.build(build.Paths(out=out, **paths))
        build.report(failed.value)
    else:
        assert build.main(["build", "--lessons", str(tmp_path / "lessons"), "--out", str(out)]) == 2
    assert snapshot(out) == before, "the previous site changed"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("._site")], "a staging folder was left behind"
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("build failed:") and "the previous site is unchanged" in err[-1]
    return [(Path(m[1]).name, int(m[2]), m[3]) for m in map(PROBLEM.match, err[:-1]) if m]


def problems_of(tmp_path, previous_site, capsys, files: dict[str, str | bytes]) -> list[tuple[str, int, str]]:
    write_lessons(tmp_path, files)
    return failing_build(tmp_path, previous_site, capsys)


@pytest.fixture
def problems(tmp_path, previous_site, capsys):
    return lambda files: problems_of(tmp_path, previous_site, capsys, files)


def assert_one(found, name: str, line: int, text: str):
    assert len(found) == 1, found
    assert found[0][:2] == (name, line), found
    assert text in found[0][2], found


# --- front matter --------------------------------------------------------------------------------------

def test_malformed_front_matter_yaml(problems):
    assert_one(problems({"one.md": "---\ntitle: [unclosed\nsummary: s\n---\n"}), "one.md", 3,
               "front matter is not valid YAML")


def test_front_matter_not_closed(problems):
    assert_one(problems({"one.md": "---\ntitle: x\n"}), "one.md", 1, "not closed by a line '---'")


def test_front_matter_missing_field(problems):
    assert_one(problems({"one.md": "---\ntitle: 课\nminutes: 5\n---\n"}), "one.md", 2, "front matter needs 'summary'")


def test_front_matter_wrong_type(problems):
    text = lesson("x\n").replace("minutes: 5", "minutes: five")
    assert_one(problems({"one.md": text}), "one.md", 4, "'minutes' must be a whole number of minutes from 1 to 600")


def test_front_matter_minutes_out_of_range(problems):
    assert_one(problems({"one.md": lesson("x\n").replace("minutes: 5", "minutes: 0")}), "one.md", 4,
               "got 0")


def test_front_matter_empty_title(problems):
    assert_one(problems({"one.md": lesson("x\n").replace("title: 课", "title: ''")}), "one.md", 2,
               "'title' must be text")


def test_front_matter_field_set_twice(problems):
    text = lesson("x\n").replace("summary: 摘要\n", "summary: 摘要\nsummary: 又一个\n")
    assert_one(problems({"one.md": text}), "one.md", 4, "'summary' is set twice (lines 3 and 4)")


def test_front_matter_unknown_field(problems):
    text = lesson("x\n").replace("minutes: 5\n", "minutes: 5\nauthor: 我\n")
    assert_one(problems({"one.md": text}), "one.md", 5, "unknown front matter field 'author'")


@pytest.mark.parametrize("field, says", [("slug: one", "the file name is the slug"),
                                         ("order: 1", "lessons/course.yml, sets the order")])
def test_front_matter_fields_that_live_elsewhere_say_where(problems, field, says):
    text = lesson("x\n").replace("minutes: 5\n", f"minutes: 5\n{field}\n")
    assert_one(problems({"one.md": text}), "one.md", 5, says)


def test_byte_order_mark_is_accepted(tmp_path):
    lessons = write_lessons(tmp_path, {"one.md": b"\xef\xbb\xbf" + lesson("带 BOM 的课。\n").encode()})
    build.build(build.Paths(lessons=lessons, out=tmp_path / "_site"))
    assert "<h1>课</h1>" in (tmp_path / "_site" / "one" / "index.html").read_text(encoding="utf-8")


def test_lesson_not_utf8(problems):
    assert_one(problems({"one.md": lesson("中文\n").encode("gb18030")}), "one.md", 1, "not UTF-8 text")


def test_file_name_is_not_a_slug(problems):
    found = problems({"one.md": lesson("x\n"), "Two Words.md": lesson("y\n")})
    assert_one(found, "Two Words.md", 1, "the file name is the lesson's slug")


def test_lesson_not_in_course_plan(problems):
    assert_one(problems({"one.md": lesson("x\n"), "nine.md": lesson("y\n")}), "nine.md", 1,
               "lesson 'nine' is not in course.yml")


def test_no_lesson_in_the_default_language(problems):
    found = problems({"en/one.md": lesson("x\n")})
    assert_one(found, "zh", 1, "no lesson in the default language (zh)")


def test_a_language_folder_the_site_does_not_know(problems):
    found = problems({"one.md": lesson("x\n"), "fr/one.md": lesson("x\n")})
    assert_one(found, "fr", 1, "'fr' is not a site language (zh, en): add its code to sim/page/languages.py")


# --- the page: directives, widgets, math, links, ids, unsafe markup --------------------------------------

def test_unknown_directive(problems):
    assert_one(problems({"one.md": lesson("段落\n\n::: sidebar\nx\n:::\n")}), "one.md", BODY_LINE + 2,
               "unknown directive 'sidebar'")


def test_directive_not_closed(problems):
    assert_one(problems({"one.md": lesson("段落\n\n::: details 摘要\nx\n")}), "one.md", BODY_LINE + 2,
               "directive 'details' is not closed by a line of colons")


def test_unknown_widget(problems):
    assert_one(problems({"one.md": lesson("::: widget rooflin\n:::\n")}), "one.md", BODY_LINE,
               "unknown widget 'rooflin'; known:")


def test_widget_config_not_a_mapping(problems):
    assert_one(problems({"one.md": lesson("::: widget roofline\n- T\n:::\n")}), "one.md", BODY_LINE + 1,
               "widget settings must be a mapping")


def test_widget_config_unknown_parameter(problems):
    assert_one(problems({"one.md": lesson("::: widget roofline\nT: 4\nbatch: 2\n:::\n")}), "one.md",
               BODY_LINE + 2, "unknown parameter 'batch'")


def test_widget_config_out_of_range(problems):
    assert_one(problems({"one.md": lesson("::: widget roofline\nB: 2000\n:::\n")}), "one.md", BODY_LINE + 1,
               "B must be a whole number from 1 to 1,024, got 2000")


def test_unknown_preset_key(problems):
    assert_one(problems({"one.md": lesson("::: widget roofline\nhardware: h900\n:::\n")}), "one.md",
               BODY_LINE + 1, "hardware must be one of a100-sxm-80gb")


def test_unknown_formula_term(problems):
    assert_one(problems({"one.md": lesson("::: formula\nt = \\term{speed}{v}\n:::\n")}), "one.md",
               BODY_LINE + 1, "unknown term 'speed'; known: peak")


def test_formula_names_a_widget_not_on_the_page(problems):
    assert_one(problems({"one.md": lesson("::: formula roofline\nt = \\term{peak}{\\pi}\n:::\n")}), "one.md",
               BODY_LINE, "widget id 'roofline', which is not on this page")


def test_an_answer_to_a_widget_that_asks_nothing(problems):
    assert_one(problems({"one.md": lesson("::: widget roofline\n:::\n\n::: answer roofline\nIt is 3.\n:::\n")}),
               "one.md", BODY_LINE + 3, "widget roofline is not a question")


def test_an_empty_answer(problems):
    body = "::: widget predict id=q\nquestion: decode-intensity\n:::\n\n::: answer q\n:::\n"
    assert_one(problems({"one.md": lesson(body)}), "one.md", BODY_LINE + 4, "answer 'q' is empty")


@pytest.mark.parametrize("href, says", [
    ("?nope.T=4#nope", "no widget with id 'nope' on this page"),
    ("?roofline.speed=4#roofline", "unknown parameter 'speed'"),
    ("?roofline.T=0#roofline", "T must be a whole number from 1"),
    ("?roofline.T=4", "must end in #ID, the widget it opens"),
    ("?T=4#roofline", "every key is ID.PARAM"),
])
def test_a_scenario_link_the_widget_cannot_open(problems, href, says):
    body = f"See [this]({href}).\n\n::: widget roofline\n:::\n"
    assert_one(problems({"one.md": lesson(body)}), "one.md", BODY_LINE, says)


def test_latex_that_cannot_render(problems):
    assert_one(problems({"one.md": lesson("文字\n\n$\\left( x$\n")}), "one.md", BODY_LINE + 2, "cannot render LaTeX")


def test_latex_rendered_as_literal_text(problems):
    assert_one(problems({"one.md": lesson("$\\htmlClass{x}{y}$\n")}), "one.md", BODY_LINE,
               "LaTeX command \\htmlClass is not supported")


def test_link_to_unknown_lesson(problems):
    assert_one(problems({"one.md": lesson("[下一课](lesson:tow)\n")}), "one.md", BODY_LINE,
               "link to lesson 'tow', which is not in lessons/course.yml")


def test_anchor_missing_on_this_page(problems):
    assert_one(problems({"one.md": lesson("## 标题 {#x}\n\n[跳](#nowhere)\n")}), "one.md", BODY_LINE + 2,
               "#nowhere is not an id on this page")


def test_anchor_missing_on_another_lesson(problems):
    found = problems({"one.md": lesson("[看](lesson:two#faq)\n"), "two.md": lesson("{#intro}\n## 开头\n")})
    assert_one(found, "one.md", BODY_LINE, "#faq is not an id on lesson 'two'")


def test_anchor_checked_on_the_same_language_page(problems):
    # two is written in English only: from the Chinese page it is upcoming, and #faq is checked nowhere;
    # from the English page the link goes to the English two, which has no #faq.
    found = problems({"one.md": lesson("[看](lesson:two#faq)\n"), "en/one.md": lesson("[see](lesson:two#faq)\n"),
                      "en/two.md": lesson("{#intro}\n## Start\n")})
    assert_one(found, "one.md", BODY_LINE, "#faq is not an id on lesson 'two'")
    assert found[0][0] == "one.md"


def test_relative_link(problems):
    assert_one(problems({"one.md": lesson("[看](../two/)\n")}), "one.md", BODY_LINE,
               "link to another lesson with lesson:SLUG")


def test_inline_expression_that_fails(problems):
    found = problems({"one.md": lesson("约 {sim}`ms(decode(anchor, h100, batch=1, context=-4).time_s)`\n")})
    assert_one(found, "one.md", BODY_LINE, "context must be a whole number from 0")


def test_two_elements_with_the_same_id_name_both_lines(problems):
    found = problems({"one.md": lesson("{#question}\n## 问题\n\n正文\n\n{#question}\n## 又一个问题\n")})
    assert_one(found, "one.md", BODY_LINE + 6, f"id 'question' is used twice on this page (lines {BODY_LINE + 1} "
                                               f"and {BODY_LINE + 6})")


def test_a_heading_id_that_a_widget_already_uses(problems):
    found = problems({"one.md": lesson("::: widget roofline\n:::\n\n{#roofline-T}\n## T\n")})
    assert_one(found, "one.md", BODY_LINE + 4, f"id 'roofline-T' is used twice on this page (lines {BODY_LINE} and")


@pytest.mark.parametrize("body, says", [
    ("段落\n\n<script>alert(1)</script>\n", "raw <script> is not allowed"),
    ('段落\n\n<p onclick="alert(1)">点</p>\n', "event-handler attribute onclick="),
    ("段落\n\n[点](javascript:alert(1))\n", "javascript: URL"),
    ("段落\n\n$\\href{javascript:alert(1)}{x}$\n", "javascript: URL in href="),
])
def test_markup_the_content_security_policy_would_block(problems, body, says):
    assert_one(problems({"one.md": lesson(body)}), "one.md", BODY_LINE + 2, says)


def test_every_problem_is_reported_at_once(tmp_path, previous_site, capsys):
    write_lessons(tmp_path, {
        "one.md": lesson("$\\nope$\n\n::: widget roofline\nT: 0\nB: 0\n:::\n\n[x](lesson:zzz)\n"),
        "two.md": "no front matter\n",
    })
    found = failing_build(tmp_path, previous_site, capsys)
    assert [(name, line) for name, line, _ in found] == [  # by file, then line
        ("one.md", BODY_LINE), ("one.md", BODY_LINE + 3), ("one.md", BODY_LINE + 4), ("one.md", BODY_LINE + 7),
        ("two.md", 1)]


def test_a_figure_for_a_configuration_that_does_not_fit_fails_at_its_line(problems):
    # 512 requests of 1,024 tokens beside the anchor's checkpoint need about 167 GB; an H100 has 85.5
    found = problems({"one.md": lesson("好的。\n\n一步 {sim}`ms(decode(anchor, h100, batch=512, context=1024).time_s)`。\n")})
    assert_one(found, "one.md", BODY_LINE + 2, "quotes a configuration that does not fit: Qwen3.8-27B on the NVIDIA "
               "H100 SXM, batch 512 at 1,024 tokens of context needs 167.23 GB of memory, and the GPU has 85.52 GB")
    assert "as_if_it_fit(...)" in found[0][2] and "'假设放得下'" in found[0][2]


def test_a_figure_as_if_it_fit_must_say_so_in_its_paragraph_even_from_the_frozen_figures(tmp_path, previous_site,
                                                                                           capsys):
    figure = "{sim}`as_if_it_fit(ms(decode(anchor, h100, batch=512, context=1024).time_s))`"
    lessons = write_lessons(tmp_path, {"one.md": lesson(f"好的。\n\n假设放得下，一步要 {figure}。\n")})
    build.build(build.Paths(lessons=lessons, out=tmp_path / "built", frozen="write"))
    assert "as_if_it_fit" in (lessons / "frozen.json").read_text(encoding="utf-8")
    (lessons / "zh" / "one.md").write_text(lesson(f"好的。\n\n一步要 {figure}。\n"), encoding="utf-8")
    found = failing_build(tmp_path, previous_site, capsys)  # its text is taken from the store, the check made again
    assert_one(found, "one.md", BODY_LINE + 2, "as if its configuration fit in memory (as_if_it_fit), and its "
               "paragraph must say so: '假设放得下'")


# --- figures from random traces and the claims made about them (issue #46) -----------------------------------
# The first chat prompt of the trace is 181 tokens long on seed 0, and on seeds 1-10: 98, 240, 319, 80, 450, 646, 836,
# 239, 427 and 566 (slo.lengths takes a trace seed, so an expression that calls it is run on all eleven).
PROMPT = 'slo.lengths("chat", 1)[0][0]'


def test_a_claim_that_holds_on_fewer_than_nine_other_traces_fails_at_its_line(problems):
    found = problems({"one.md": lesson(f"好的。\n\n第一个提示很长。{{claim}}`{PROMPT} > 100`\n")})
    assert_one(found, "one.md", BODY_LINE + 2, f"{{claim}}`{PROMPT} > 100` holds on seed 0 but on only 8 of the 10 "
               "other traces (seeds 1–10), and a claim must hold on 9")


@pytest.mark.parametrize("claim", [f"{PROMPT} > 200", "2 + 2 == 5"])
def test_a_claim_that_is_false_fails_at_its_line(problems, claim):
    assert_one(problems({"one.md": lesson(f"好的。\n\n很长。{{claim}}`{claim}`\n")}), "one.md", BODY_LINE + 2,
               f"{{claim}}`{claim}` is false")


def test_a_claim_is_true_or_false(problems):
    assert_one(problems({"one.md": lesson(f"{{claim}}`{PROMPT}`\n")}), "one.md", BODY_LINE,
               "gave 181: a claim is a comparison, True or False")


def test_a_figure_from_a_random_trace_is_one_number_in_a_form_that_can_be_rounded(problems):
    found = problems({"one.md": lesson(f"{{sim}}`grouped({PROMPT}) + grouped({PROMPT})`\n\n"
                                       f"{{sim}}`flops_({PROMPT}) + 'x'`\n")})
    assert len(found) == 1 and found[0][:2] == ("one.md", BODY_LINE), found
    assert "must be one formatted number" in found[0][2] and "fmt_grouped, fmt_grouped" in found[0][2]


def test_every_language_of_a_lesson_makes_the_same_claims(problems):
    zh = lesson(f"好的。{{claim}}`{PROMPT} > 90`\n")
    found = problems({"one.md": zh, "en/one.md": lesson("Fine.\n")})
    assert_one(found, "one.md", BODY_LINE, f"{{claim}}`{PROMPT} > 90` is not on the en page of this lesson")


# --- the course plan, the catalogs and the glossary ------------------------------------------------------

def test_planned_lesson_without_a_title_in_a_language(tmp_path, previous_site, capsys):
    lessons = write_lessons(tmp_path, {"one.md": lesson("x\n"), "zh/catalog.yml": "upcoming:\n  two: 二\n" + TERM_WORDS
                                                               + CHAPTER_WORDS})
    found = failing_build(tmp_path, previous_site, capsys)
    assert_one(found, "catalog.yml", 1, "planned lesson 'later' has no zh title")
    assert lessons.is_dir()


def test_a_title_in_two_homes(problems):
    found = problems({"one.md": lesson("x\n"), "zh/catalog.yml": "upcoming:\n  one: 一\n  two: 二\n  later: 后\n"
                                                                 + TERM_WORDS + CHAPTER_WORDS})
    assert_one(found, "catalog.yml", 2, "'one' is written in zh (one.md), whose front matter holds its title")


def test_plan_lists_a_slug_twice(tmp_path, previous_site, capsys):
    write_lessons(tmp_path, {"one.md": lesson("x\n")})
    (tmp_path / "lessons" / "course.yml").write_text(PLAN_TEXT.replace("- two\n", "- two\n    - one\n"),
                                                     encoding="utf-8")
    assert_one(failing_build(tmp_path, previous_site, capsys), "course.yml", 5, "'one' is listed twice (line 3)")


def test_term_without_words_in_a_language(problems):
    # Required there because a page in that language uses it (a term no English page uses needs no English words).
    found = problems({"one.md": lesson("x\n"), "en/one.md": lesson("::: formula\nt = \\term{peak}{\\pi}\n:::\n"),
                      "en/catalog.yml": "upcoming:\n  two: Two\n  later: Later\nterms:\n  peak: {name: peak, unit: FLOP/s}\n"
                                        + CHAPTER_WORDS})
    assert_one(found, "catalog.yml", 5, "term 'peak' needs text in en")


def site_catalogs(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "i18n"
    shutil.copytree(build.Paths.catalogs, folder)
    path = folder / "en.yml"
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    return folder


def test_site_catalog_missing_a_key(tmp_path, previous_site, capsys):
    lessons = write_lessons(tmp_path, {"one.md": lesson("x\n")})
    catalogs = site_catalogs(tmp_path, lambda text: text.replace("  retry: Retry\n", ""))
    found = failing_build(tmp_path, previous_site, capsys, lessons=lessons, catalogs=catalogs)
    zh_line = (build.Paths.catalogs / "zh.yml").read_text(encoding="utf-8").splitlines().index("  retry: 重试") + 1
    [(name, line, message)] = found
    assert name == "en.yml" and message == f"'widget.retry' is missing (it is at zh.yml:{zh_line})"
    assert (catalogs / "en.yml").read_text(encoding="utf-8").splitlines()[line - 1] == "widget:"


def test_site_catalog_placeholders_differ(tmp_path, previous_site, capsys):
    lessons = write_lessons(tmp_path, {"one.md": lesson("x\n")})
    catalogs = site_catalogs(tmp_path, lambda text: text.replace('"about {minutes} minutes"', '"about {mins} minutes"'))
    [(name, line, message)] = failing_build(tmp_path, previous_site, capsys, lessons=lessons, catalogs=catalogs)
    assert name == "en.yml" and "'lesson.minutes' has placeholders {mins}, but zh.yml:" in message
    assert "about {mins} minutes" in (catalogs / "en.yml").read_text(encoding="utf-8").splitlines()[line - 1]


# --- languages ------------------------------------------------------------------------------------------

def test_every_language_of_a_lesson_evaluates_the_same_figures_and_starts_the_same_widgets(problems, tmp_path):
    # issue #46: one lesson per topic. The en page lacks one figure of the zh page and has one of its own, and
    # starts the roofline elsewhere; each difference is reported where it is, naming the page that lacks it.
    zh = lesson("一步 {sim}`grouped(2 + 2)`，两步 {sim}`grouped(3 + 3)`。\n\n::: widget roofline\nT: 64\n:::\n")
    en = lesson("A step {sim}`grouped(2 + 2)`, and {sim}`grouped(5 + 5)`.\n\n::: widget roofline\nT: 32\n:::\n")
    found = sorted(problems({"one.md": zh, "en/one.md": en}), key=lambda p: p[2])
    assert len(found) == 3, found
    assert [(line, text.split(" is not")[0].split(" starts")[0]) for _, line, text in found] == [
        (BODY_LINE + 2, "widget 'roofline'"), (BODY_LINE, "{sim}`grouped(3 + 3)`"), (BODY_LINE, "{sim}`grouped(5 + 5)`")]
    assert '"T": 32' in found[0][2] and '"T": 64' in found[0][2]  # both settings, the page's own first
    assert "not on the en page" in found[1][2] and "not on the zh page" in found[2][2]
    # the same figures, in any order and any number of times, and the same widget: no problem
    same = lesson("{sim}`grouped(3 + 3)` and {sim}`grouped(2 + 2)`, {sim}`grouped(2 + 2)`.\n\n"
                  "::: widget roofline\nT: 64\n:::\n")
    root = tmp_path / "good"
    build.build(build.Paths(lessons=write_lessons(root, {"one.md": zh, "en/one.md": same}), out=root / "_site"))


# --- the course read in order: wayfinding and the evolution map ------------------------------------------

def test_a_link_worded_as_the_previous_lesson_must_link_the_one_before(problems):
    # the plan is one, two, later: the lesson before two is one
    found = problems({"one.md": lesson("x\n"), "two.md": lesson("好。\n\n[上一课](lesson:later)停在一次卡顿上。\n")})
    assert_one(found, "two.md", BODY_LINE + 2, "[上一课](lesson:later) is worded as the previous lesson ('上一课'), "
                                               "but the lesson before 'two' in lessons/course.yml is 'one'")


def test_a_link_worded_as_the_next_lesson_must_link_the_one_after(problems):
    found = problems({"one.md": lesson("x\n"), "en/one.md": lesson("x\n"), "en/two.md": lesson(
        "Fine.\n\nThe course's next lesson asks one thing.\nWhy? → [课](lesson:one)\n")})
    messages = [m for _, _, m in found]
    assert [line for _, line, _ in found] == [BODY_LINE + 3] * 2, found
    assert any("is worded as the next lesson ('next lesson'), but the lesson after 'two' in lessons/course.yml is "
               "'later'" in m for m in messages), messages
    assert any("a teaser (after →) points ahead in the course, but 'one' is before 'two'" in m for m in messages)


def test_a_teaser_names_its_lesson_by_its_title(problems):
    found = problems({"one.md": lesson("下一课讲什么？→ [别的名字](lesson:two)\n"), "two.md": lesson("x\n")})
    assert_one(found, "one.md", BODY_LINE, "a teaser's link (after →) names its lesson by its title: "
                                           "[别的名字](lesson:two) should read [课]")


EVOLUTION = ("intro: 地图。\nitems:\n  - name: 第一步\n    lesson: one\n    solved: 好\n    stuck: 慢\n"
             "  - name: 第二步\n    lesson: two\n    solved: 好\n    stuck: 慢\n")


def test_the_evolution_map_follows_the_course(problems):
    found = problems({"one.md": lesson("x\n"), "zh/evolution.yml": EVOLUTION.replace("lesson: one", "lesson: later")})
    assert_one(found, "evolution.yml", 8, "item 2 (two) comes after an item of later (line 3), but "
                                          "lessons/course.yml puts two first: the map follows the course's order")


def test_the_evolution_map_is_the_same_in_every_language(problems):
    en = EVOLUTION.replace("地图", "Map").replace("stuck: 慢\n  - name", "stuck: \"{sim}`grouped(1 + 1)`\"\n  - name")
    found = problems({"one.md": lesson("x\n"), "zh/evolution.yml": EVOLUTION, "en/evolution.yml": en})
    assert_one(found, "evolution.yml", 3, "item 1 has {sim}`grouped(1 + 1)`, which lessons/zh/evolution.yml:3 lacks: "
                                          "every language's map evaluates the same figures")


def test_the_evolution_map_refuses_a_link_that_works_on_one_page_only(problems):
    found = problems({"one.md": lesson("x\n"),
                      "zh/evolution.yml": EVOLUTION.replace("solved: 好\n", "solved: \"[看](#x)\"\n", 1)})
    assert_one(found, "evolution.yml", 5, "item 1: the link '#x' works on one page only")


def test_a_lesson_shows_the_map_that_is_written_once(problems):
    # a body is refused; a figure that fails in the map is reported at the directive, naming the map's line
    found = problems({"one.md": lesson("::: evolution\n- name: a\n:::\n"), "two.md": lesson("x\n\n::: evolution\n:::\n"),
                      "zh/evolution.yml": EVOLUTION.replace("stuck: 慢\n", "stuck: \"{sim}`nosuch(1)`\"\n", 1)})
    found = sorted(found)
    assert [(name, line) for name, line, _ in found] == [("one.md", BODY_LINE), ("two.md", BODY_LINE + 2)], found
    assert "::: evolution takes no arguments and no body: the map is written once, in lessons/zh/evolution.yml" \
        in found[0][2]
    assert found[1][2].startswith("in the evolution map, lessons/zh/evolution.yml:6: ") and "NameError" in found[1][2]


def test_a_lesson_without_a_step_on_the_map_is_told_to_add_one(problems):
    found = problems({"one.md": lesson("x\n"), "later.md": lesson("::: evolution\n:::\n"),
                      "zh/evolution.yml": EVOLUTION})
    assert_one(found, "later.md", BODY_LINE, "no item of lessons/zh/evolution.yml has lesson: later")


def test_a_directive_inside_one_with_a_fence_as_long_is_blamed_on_the_outer_one(problems):
    # The ':::' meant to close the details closes the callout; the author is told which fence to lengthen, at the
    # callout's line, not that the details is unclosed.
    found = problems({"one.md": lesson("Text.\n\n::: callout note\nInside.\n\n::: details More\nHidden.\n:::\n")})
    assert_one(found, "one.md", BODY_LINE + 2,
               f"directive 'callout' holds 'details' (line {BODY_LINE + 5}) behind a fence as long as its own (':::'): "
               f"the ':::' at line {BODY_LINE + 7} closes the callout, and the details is left open. Open and close "
               "the callout with a longer fence ('::::' … '::::') to hold a directive inside it")


def test_a_directive_inside_one_with_a_longer_fence_is_fine(tmp_path, previous_site, capsys):
    write_lessons(tmp_path, {"one.md": lesson(":::: callout note\nInside.\n\n::: details More\nHidden.\n:::\n::::\n")})
    build.build(build.Paths(lessons=tmp_path / "lessons", out=tmp_path / "out"))


def test_a_failed_widget_is_reported_once_not_again_by_what_refers_to_it(problems):
    # Its formula, its scenario link and its worked answer would each say it is not on the page.
    body = ("::: widget roofline id=tp\nB: 5000\n:::\n\n::: formula tp\nt = \\term{peak}{\\pi}\n:::\n\n"
            "See [this](?tp.T=4#tp).\n")
    assert_one(problems({"one.md": lesson(body)}), "one.md", BODY_LINE + 1,
               "widget roofline: B must be a whole number from 1 to 1,024, got 5000")


def test_a_failed_question_is_reported_once_not_again_by_its_worked_answer(problems):
    question = "::: widget predict id=q\nquestion: nope\n:::\n\n::: answer q\nBecause.\n:::\n"
    found = problems({"one.md": lesson(question)})
    assert len(found) == 1 and found[0][:2] == ("one.md", BODY_LINE + 1), found


# A mistyped name is answered with the nearest one there is.
@pytest.mark.parametrize("body, says", [
    ("约 {sim}`ms(decode(anchor, h100, batch=1, context=4).time)`\n",
     "expression 'ms(decode(anchor, h100, batch=1, context=4).time)' failed: AttributeError: 'Estimate' object has "
     "no attribute 'time' (did you mean 'time_s'?)"),
    ("约 {sim}`gb(quantizaton.matmul_weight_bytes(anchor))`\n",
     "expression 'gb(quantizaton.matmul_weight_bytes(anchor))' failed: NameError: name 'quantizaton' is not defined "
     "(did you mean 'quantization'?)"),
    ("[下一课](lesson:tow)\n", "link to lesson 'tow', which is not in lessons/course.yml (did you mean 'two'?)"),
    ("{#intro}\n## 标题\n\n[跳](#intr)\n", "#intr is not an id on this page (did you mean 'intro'?)"),
    ("::: widget rooflin\n:::\n", "(did you mean 'roofline'?)"),
    ("::: detail 更多\n:::\n", "(did you mean 'details'?)"),
])
def test_a_mistyped_name_is_answered_with_the_nearest_one(problems, body, says):
    found = problems({"one.md": lesson(body)})
    assert len(found) == 1 and says in found[0][2], found
    assert found[0][2].endswith(says[-30:]), found


# A widget setting or option the widget does not have is answered with the nearest one (the kit names those it has,
# builder/widgets.py setting_message adds the nearest: difflib stays out of sim/).
@pytest.mark.parametrize("setting, says", [
    ("weight_dtyp: int4", "widget decode-ceiling: unknown parameter 'weight_dtyp'; known: model, params_b, "
                          "weight_dtype, hardware, bandwidth_efficiency (did you mean 'weight_dtype'?)"),
    ("weight_dtype: int3", "widget decode-ceiling: weight_dtype must be one of bf16, fp8, int4; got 'int3' "
                           "(did you mean 'int4'?)"),
    ("weight_dtype: fp64", "widget decode-ceiling: weight_dtype must be one of bf16, fp8, int4; got 'fp64'"),
])
def test_a_widget_setting_the_widget_does_not_have_names_the_nearest(problems, setting, says):
    found = problems({"one.md": lesson(f"::: widget decode-ceiling\nmodel: llama-2-7b\n{setting}\n:::\n")})
    assert found == [("one.md", BODY_LINE + 2, says)]


def test_a_scenario_link_to_an_option_the_widget_does_not_have_names_the_nearest(problems):
    found = problems({"one.md": lesson("See [this](?d.weight_dtype=int3#d).\n\n::: widget decode-ceiling id=d\n:::\n")})
    assert found == [("one.md", BODY_LINE, "scenario link '?d.weight_dtype=int3#d': widget d: weight_dtype must be one "
                                           "of bf16, fp8, int4; got 'int3' (did you mean 'int4'?)")]
