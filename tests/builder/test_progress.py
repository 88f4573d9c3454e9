"""The home page carries what the page script needs to show a student's progress: each written lesson's number of
questions in that language (a question is any widget whose view has the flags `answered` and `correct`), and, for
the list of questions to revisit, one hidden entry per question with its key, link and name."""

import re
import shutil
from pathlib import Path

import pytest

import build

HERE = Path(__file__).parent

# Two questions in the demo lesson, in both languages as every page of a lesson has the same widgets (one before its
# first heading, one under "公式" / "Formula"), and one in the second lesson, written in Chinese only.
QUESTION = "\n::: widget predict id={id}\nquestion: decode-intensity\n:::\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("progress")
    lessons = root / "lessons"
    shutil.copytree(HERE / "lessons", lessons)
    zh = lessons / "zh" / "demo.md"
    head, _, rest = zh.read_text(encoding="utf-8").partition("{#formula}")
    zh.write_text(head + QUESTION.format(id="q-top") + "\n{#formula}" + rest + QUESTION.format(id="q-formula"),
                  encoding="utf-8")
    en = lessons / "en" / "demo.md"
    head, _, rest = en.read_text(encoding="utf-8").partition("{#formula}")
    en.write_text(head + QUESTION.format(id="q-top") + "\n{#formula}" + rest + QUESTION.format(id="q-formula"),
                  encoding="utf-8")
    second = lessons / "zh" / "second.md"
    second.write_text(second.read_text(encoding="utf-8") + QUESTION.format(id="q-second"), encoding="utf-8")
    out = root / "_site"
    build.build(build.Paths(lessons=lessons, out=out))
    return out


def home(site: Path, lang_dir: str) -> str:
    return (site / lang_dir / "index.html").read_text(encoding="utf-8")


def test_each_written_lesson_carries_its_number_of_questions_in_that_language(site):
    zh, en = home(site, "."), home(site, "en")
    assert re.findall(r'data-progress="(\w+)" data-questions="(\d+)"', zh) == [("demo", "2"), ("second", "1")]
    assert re.findall(r'data-progress="(\w+)" data-questions="(\d+)"', en) == [("demo", "2")]
    # A widget without the flags (the roofline) is no question; an upcoming lesson has no entry at all.
    assert "later" not in re.findall(r'data-progress="(\w+)"', en)


def test_every_question_is_listed_hidden_with_its_key_link_and_the_heading_it_lies_under(site):
    entry = re.compile(r'<li data-question="([^"]+)" hidden><a href="([^"]+)">([^<]+)</a></li>')
    assert entry.findall(home(site, ".")) == [
        ("demo#q-top", "demo/#q-top", "演示课 · 第 1 题"),
        ("demo#q-formula", "demo/#q-formula", "演示课 · 第 2 题（「公式」一节）"),
        ("second#q-second", "second/#q-second", "第二课 · 第 1 题"),
    ]
    # The key is the same in every language: an answer given in one counts in the other.
    assert entry.findall(home(site, "en")) == [
        ("demo#q-top", "demo/#q-top", "Demo lesson — question 1"),
        ("demo#q-formula", "demo/#q-formula", "Demo lesson — question 2, under “Formula”"),
    ]


def test_the_home_page_loads_the_page_script_and_a_lesson_names_its_slug(site):
    assert 'page.js"></script>' in home(site, "en") and "data-forget-progress" in home(site, "en")
    assert '<article class="lesson" data-lesson="demo"' in (site / "en" / "demo" / "index.html").read_text(encoding="utf-8")
