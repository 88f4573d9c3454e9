"""The lesson cache (builder/cache.py): a build that takes lessons from it makes the same site, byte for byte, as
one that parses every lesson; a save parses again only the lesson it changed, and any other edit every lesson."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import build
from builder.cache import Cache

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def lessons(tmp_path) -> Path:
    folder = tmp_path / "lessons"
    shutil.copytree(ROOT / "lessons", folder)
    return folder


def site(paths: build.Paths, parses: list) -> tuple[dict[str, bytes], str]:
    """The site's pages and the frozen figures it used, counting in `parses` the lessons it parsed."""
    store = build.frozen_store(paths)
    files = build.build_site(paths, store)
    pages = {path: data for path, data in files.items() if path.endswith(".html")}
    return pages, store.text()


@pytest.fixture
def parses(monkeypatch) -> list:
    parsed = []
    real = build.parse_lesson

    def counted(source, *args):
        parsed.append(f"{source.lang}/{source.slug}")
        return real(source, *args)

    monkeypatch.setattr(build, "parse_lesson", counted)
    return parsed


def test_a_build_from_the_cache_is_the_build_without_it_and_a_save_parses_only_its_lesson(lessons, tmp_path, parses):
    without = build.Paths(lessons=lessons, out=tmp_path / "a")
    cached = build.Paths(lessons=lessons, out=tmp_path / "b", cache=tmp_path / "cache")
    every = len(list(lessons.glob("*/*.md")))

    reference, figures = site(without, parses)
    assert len(parses) == every
    parses.clear()
    assert site(cached, parses) == (reference, figures)  # the first build with a cache: every lesson, kept
    assert len(parses) == every
    parses.clear()
    # Taken from the cache: the same pages, and the same frozen figures used (a build writes back only those).
    assert site(cached, parses) == (reference, figures)
    assert parses == []

    page = lessons / "en" / "sampling.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nA sentence added by a save.\n", encoding="utf-8")
    pages, again = site(cached, parses)
    assert parses == ["en/sampling"] and again == figures
    assert "A sentence added by a save." in pages["en/sampling/index.html"].decode()
    assert {path for path in pages if pages[path] != reference[path]} == {"en/sampling/index.html"}
    assert site(without, [])[0] == pages  # and what the cache made of it is what a build without it makes

    # A lesson's title is checked on other pages (a teaser's link names the lesson it points to by its title): a
    # change of title parses every lesson again, and the pages that name the old title say so.
    parses.clear()
    other = lessons / "en" / "quantization.md"
    other.write_text(other.read_text(encoding="utf-8").replace('title: "', 'title: "Renamed ', 1), encoding="utf-8")
    with pytest.raises(build.BuildFailed) as failed:
        site(cached, parses)
    assert len(parses) == every
    assert {p.path.name for p in failed.value.problems} == {"kv-cache-serving.md", "speculative-decoding.md"}


def test_an_edit_outside_the_lessons_parses_every_lesson_again(lessons, tmp_path, parses):
    catalog = lessons / "en" / "catalog.yml"
    paths = build.Paths(lessons=lessons, out=tmp_path / "_site", cache=tmp_path / "cache")
    site(paths, parses)
    parses.clear()
    catalog.write_text(catalog.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    site(paths, parses)
    assert len(parses) == len(list(lessons.glob("*/*.md")))


def test_a_lesson_with_a_problem_is_not_kept(lessons, tmp_path, parses):
    page = lessons / "en" / "sampling.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[nowhere](lesson:no-such-lesson)\n", encoding="utf-8")
    paths = build.Paths(lessons=lessons, out=tmp_path / "_site", cache=tmp_path / "cache")
    for _ in range(2):
        parses.clear()
        with pytest.raises(build.BuildFailed) as failed:
            site(paths, parses)
        assert any("no-such-lesson" in p.message for p in failed.value.problems)
        assert "en/sampling" in parses  # parsed again, and its problem reported again


def test_an_entry_is_taken_only_for_its_key_and_inputs(tmp_path):
    Cache(tmp_path, "inputs one").put("lesson a", "body one", ("parsed",))
    assert Cache(tmp_path, "inputs one").get("lesson a", "body one") == ("parsed",)
    assert Cache(tmp_path, "inputs one").get("lesson a", "body two") is None
    assert Cache(tmp_path, "inputs two").get("lesson a", "body one") is None
    assert Cache(None, "inputs one").get("lesson a", "body one") is None
    (next(tmp_path.glob("*.pickle"))).write_bytes(b"not a pickle")
    assert Cache(tmp_path, "inputs one").get("lesson a", "body one") is None
