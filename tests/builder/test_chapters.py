"""Chapters: the course plan (lessons/course.yml) groups the lessons into chapters, whose words live in the catalogs;
the build refuses a plan or a catalog that gets them wrong, at file:line; each chapter has a page in every language
with pages, the home page lists the chapters, and the course still reads in one order across a chapter's end."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

import build
from tests.builder.test_bad_input import TERM_WORDS, failing_build, lesson, previous_site, write_lessons  # noqa: F401

HERE = Path(__file__).parent
PLAN = "- chapter: first\n  lessons:\n    - one\n    - two\n- chapter: then\n  lessons:\n    - later\n"
WORDS = "chapters:\n  first: {title: 第一章, summary: 先讲这些。}\n  then: {title: 然后, summary: 再讲这些。}\n"

# Every page the site had before it had chapters: each must still be built, at the same address.
PAGES_BEFORE_CHAPTERS = [f"{lang}{page}index.html" for lang in ("", "en/") for page in (
    "", "offline/", "prefill-decode/", "inference-vs-training/", "kv-cache-serving/", "sampling/",
    "speculative-decoding/", "quantization/", "pd-disaggregation/", "attention-variants/")]


def load_problems(tmp_path: Path, plan: str = PLAN, files: dict[str, str] | None = None) -> list[tuple[str, int, str]]:
    """The load problems of a course (zh: one and two written; en: one written unless `files` say otherwise), as
    (file name, line, message)."""
    files = {"one.md": lesson("x\n"), "two.md": lesson("x\n"), "en/one.md": lesson("x\n"),
             "zh/catalog.yml": "upcoming:\n  later: 后来\n" + WORDS,
             "en/catalog.yml": "upcoming:\n  two: Two\n  later: Later\n" + WORDS, **(files or {})}
    lessons = write_lessons(tmp_path, {name: text + TERM_WORDS if name.endswith("catalog.yml") else text
                                       for name, text in files.items() if text is not None})
    (lessons / "course.yml").write_text(plan, encoding="utf-8")
    _, problems, blocking = build.load_sources(build.Paths(lessons=lessons))
    return sorted((p.path.name, p.line, p.message) for p in problems + blocking)


def test_a_good_plan_and_catalogs_load_without_a_problem(tmp_path):
    assert load_problems(tmp_path) == []


@pytest.mark.parametrize("plan, expected", [
    ("- one\n- two\n- later\n",
     [("course.yml", line, "the course plan is a list of chapters, each '- chapter: SLUG' with its lessons' slugs in "
                           "order under 'lessons:' (this entry is not a chapter)") for line in (1, 2, 3)]),
    (PLAN.replace("  lessons:\n    - one", "  lesons:\n    - one"),
     [("course.yml", 1, "chapter 'first' needs 'lessons:', its lessons' slugs in reading order, one '- slug' per line"),
      ("course.yml", 2, "'lesons' is not a key of a chapter (chapter, lessons) (did you mean 'lessons'?)")]),
    (PLAN.replace("- chapter: then\n", "- chapter: then\n  title: 然后\n"),
     [("course.yml", 6, "'title' is not a key of a chapter (chapter, lessons): a chapter's title is in each "
                        "language's catalog, lessons/<lang>/catalog.yml, under chapters")]),
    (PLAN + "    - one\n", [("course.yml", 8, "'one' is listed twice (line 3)")]),
    (PLAN.replace("chapter: then", "chapter: first"), [("course.yml", 5, "chapter 'first' is listed twice (line 1)")]),
    (PLAN.replace("chapter: then", "chapter: later"),
     [("course.yml", 5, "chapter 'later' has the slug of a lesson (line 7), and both would be at later/: give the "
                        "chapter another slug")]),
    (PLAN.replace("chapter: then", "chapter: offline"),
     [("course.yml", 5, "chapter 'offline' would take the offline page's address (offline/): give the chapter "
                        "another slug")]),
    (PLAN.replace("chapter: then", "chapter: en"),
     [("course.yml", 5, "chapter 'en' would take a language's folder (en/): give the chapter another slug")]),
    (PLAN.replace("chapter: then", "chapter: Then"),
     [("course.yml", 5, "a chapter's 'chapter:' is its slug, the address of its page: lowercase letters, digits and "
                        "hyphens")]),
], ids=["flat-list", "misspelt-key", "title-in-plan", "lesson-twice", "chapter-twice", "chapter-is-a-lesson",
        "chapter-is-offline", "chapter-is-a-language", "chapter-not-a-slug"])
def test_the_plan_is_checked_at_its_lines(tmp_path, plan, expected):
    # (the lessons a broken chapter leaves out of the plan say so too, in their own files)
    assert [p for p in load_problems(tmp_path, plan) if p[0] == "course.yml"] == expected


def test_a_chapter_needs_its_words_in_every_language_with_pages(tmp_path):
    en = "upcoming:\n  two: Two\n  later: Later\nchapters:\n  first: {title: First}\n  then: {titel: Then}\n"
    assert load_problems(tmp_path, files={"en/catalog.yml": en}) == [
        ("catalog.yml", 5, "chapter 'first' has no en summary: add chapters.first.summary to lessons/en/catalog.yml"),
        ("catalog.yml", 6, "'titel' is not a chapter's word (title, summary) (did you mean 'title'?)"),
        ("catalog.yml", 6, "chapter 'then' has no en summary: add chapters.then.summary to lessons/en/catalog.yml"),
        ("catalog.yml", 6, "chapter 'then' has no en title: add chapters.then.title to lessons/en/catalog.yml"),
    ]


def test_a_language_without_pages_needs_no_chapter_words(tmp_path):
    found = load_problems(tmp_path, files={"en/one.md": None, "en/catalog.yml": "upcoming: {one: One, two: Two, "
                                                                                 "later: Later}\n"})
    assert found == []


def test_a_catalog_names_only_the_plan_s_chapters(tmp_path):
    zh = "upcoming:\n  later: 后来\n" + WORDS + "  thne: {title: 错字, summary: 错字。}\n"
    assert load_problems(tmp_path, files={"zh/catalog.yml": zh}) == [
        ("catalog.yml", 6, "chapter 'thne' is not in course.yml (did you mean 'then'?)"),
    ]


def test_the_build_fails_at_the_plan_s_line_and_keeps_the_previous_site(tmp_path, previous_site, capsys):  # noqa: F811
    words = "chapters:\n  first: {title: 一, summary: 一。}\n  two: {title: 二, summary: 二。}\n"
    write_lessons(tmp_path, {"one.md": lesson("x\n"), "zh/catalog.yml": "upcoming:\n  two: 二\n  later: 后\n" + words
                             + TERM_WORDS})
    plan = tmp_path / "lessons" / "course.yml"
    plan.write_text(plan.read_text(encoding="utf-8").replace("chapter: then", "chapter: two"), encoding="utf-8")
    assert failing_build(tmp_path, previous_site, capsys) == [
        ("course.yml", 5, "chapter 'two' has the slug of a lesson (line 4), and both would be at two/: give the "
                          "chapter another slug")]


# --- the pages ---------------------------------------------------------------------------------------------------

MAP = ("intro: 地图。\nitems:\n  - name: 起点\n    lesson: null\n    solved: 好\n    stuck: 慢\n"
       "  - name: 演示\n    lesson: demo\n    solved: 好\n    stuck: \"{sim}`grouped(1000 + 24)`\"\n"
       "  - name: 第二课\n    lesson: second\n    solved: 好\n    stuck: 慢\n")


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory) -> Path:
    """The demo course (basics: demo; onwards: second, later), with an evolution map in Chinese."""
    root = tmp_path_factory.mktemp("chapters")
    shutil.copytree(HERE / "lessons", root / "lessons")
    (root / "lessons" / "zh" / "evolution.yml").write_text(MAP, encoding="utf-8")
    out = root / "_site"
    build.build(build.Paths(lessons=root / "lessons", out=out))
    return out


def read(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


def test_each_chapter_has_a_page_in_every_language_with_pages(demo_site):
    for path in ("basics", "onwards", "en/basics", "en/onwards"):
        assert (demo_site / path / "index.html").is_file(), path
    onwards = read(demo_site, "onwards")
    assert re.search(r"<h1 id=\"chapter-title\">往后</h1>\s*<p class=\"lesson-summary\">第二章接着讲。</p>", onwards)
    lessons = re.findall(r'<li(?: class="upcoming")?>(?:<a href="([^"]+)">|<span class="lesson-upcoming-title">)'
                         r'([^<]+)<', onwards)
    assert lessons == [("../second/", "第二课"), ("", "以后的课")]
    assert '<ol class="lesson-list" start="2">' in onwards  # numbered in the course's order
    assert '<a class="pager-prev" rel="prev" href="../basics/">' in onwards  # the chapter before
    english = read(demo_site, "en/onwards")
    assert "The second chapter goes on from there." in english
    assert english.count('<span class="badge">Coming soon</span>') == 2  # neither is written in English
    assert 'data-chapter-progress' not in english  # nothing written in English: no progress to show
    assert '<a href="../../onwards/" hreflang="zh"' in english  # the switch leads to the same chapter


def test_a_chapter_page_shows_its_length_its_progress_keys_and_the_whole_map(demo_site):
    basics = read(demo_site, "basics")
    assert '<span class="chapter-size">1 课，约 5 分钟</span>' in basics
    keys = re.search(r'data-chapter-progress="basics" data-questions="([^"]*)" data-sections="([^"]*)"', basics)
    assert keys.group(1) == ""  # the demo lesson asks no question
    assert keys.group(2).split() and all(key.startswith("demo#") for key in keys.group(2).split())
    steps = re.findall(r'<li class="generation([^"]*)">.*?class="generation-name"[^>]*>([^<]+)<', basics)
    assert steps == [("", "起点"), (" here", "演示"), ("", "第二课")]  # every step, this chapter's marked
    assert '<strong class="badge badge-here">本章</strong>' in basics and 'aria-current' not in basics
    assert '<a class="generation-name" href="../second/">第二课</a>' in basics and "1,024" in basics
    assert "data-pagefind-body" not in basics  # only lessons are searched
    assert "<h2 id=\"evolution\">" not in read(demo_site, "en/basics")  # no English map in this course


def test_the_home_page_lists_the_chapters_with_their_lessons(demo_site):
    home = read(demo_site, "")
    chapters = re.findall(r'<h3 id="chapter-(\w+)"><a href="([^"]+)"><span class="chapter-number">([^<]+)</span> '
                          r'([^<]+)</a></h3>', home)
    assert chapters == [("basics", "basics/", "第 1 章", "基础"), ("onwards", "onwards/", "第 2 章", "往后")]
    assert home.index("demo/") < home.index("onwards/") < home.index("second/")
    assert re.findall(r'data-progress="(\w+)"', home) == ["demo", "second"]


def test_the_pager_crosses_a_chapter_s_end_and_a_lesson_links_its_chapter(demo_site):
    demo = read(demo_site, "demo")
    assert '<a class="pager-next" rel="next" href="../second/">' in demo  # basics' last lesson to onwards' first
    assert '<a class="lesson-chapter" href="../basics/" data-pagefind-ignore>第 1 章 · 基础</a>' in demo
    assert '<a class="lesson-chapter" href="../onwards/" data-pagefind-ignore>第 2 章 · 往后</a>' in \
        read(demo_site, "second")


def test_chapter_pages_are_kept_as_they_are_visited_like_the_home_page(demo_site):
    worker = (demo_site / "sw.js").read_text(encoding="utf-8")
    manifest = json.loads(re.search(r"const BUILD = (\{.*?\});", worker).group(1))
    listed = set(manifest["files"]) | set(manifest["later"])
    assert "offline/" in listed
    assert not {"", "basics/", "basics/index.html", "en/onwards/index.html"} & listed


@pytest.fixture(scope="module")
def course_files() -> dict:
    return build.build_site(build.Paths())


def test_every_page_the_site_had_is_still_built_at_its_address(course_files):
    assert [page for page in PAGES_BEFORE_CHAPTERS if page not in course_files] == []
    chapters = [f"{lang}{slug}/index.html" for lang in ("", "en/") for slug in ("foundations", "scaling-out")]
    assert [page for page in chapters if page not in course_files] == []


def test_each_chapter_s_page_shows_the_whole_map_with_its_own_steps_marked(course_files):
    root = Path(build.__file__).parent
    plan = {c["chapter"]: c["lessons"] for c in yaml.safe_load((root / "lessons/course.yml").read_text("utf-8"))}
    items = yaml.safe_load((root / "lessons/en/evolution.yml").read_text("utf-8"))["items"]
    for chapter, lessons in plan.items():
        page = course_files[f"en/{chapter}/index.html"].decode()
        steps = re.findall(r'<li class="generation( here)?"', page)
        assert len(steps) == page.count('class="generation-name"') == len(items) > 8
        # a step is marked on the page of the chapter whose lesson teaches it (the first step no lesson teaches)
        assert steps == [" here" if item["lesson"] in lessons else "" for item in items]
    first = plan["foundations"]
    assert items[0]["lesson"] is None and all(item["lesson"] in first for item in items[1:len(first) + 1])
    unwritten = [slug for slug in plan["scaling-out"] if not (root / "lessons/zh" / f"{slug}.md").exists()]
    second = course_files["scaling-out/index.html"].decode()
    assert 0 < len(unwritten) == second.count('<span class="badge">即将推出</span>')
