"""The search index: written by the build with one index per language, over the lessons only; an indexer that is
missing or fails stops the build with a message that says what to do, and the previous site stays."""

import gzip
import json
import stat
from pathlib import Path

import pytest

import build
from builder import search
from builder.problems import BuildFailed

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("search") / "_site"
    build.build(build.Paths(lessons=HERE / "lessons", out=out))
    return out


def fragments(site: Path) -> list[dict]:
    """Every page the index holds: Pagefind's fragment files, gzip-compressed JSON after a short signature."""
    pages = []
    for path in sorted((site / "pagefind" / "fragment").glob("*.pf_fragment")):
        data = gzip.decompress(path.read_bytes())
        pages.append(json.loads(data[data.index(b"{"):]))
    return pages


def test_the_build_writes_an_index_per_language(demo_site):
    entry = json.loads((demo_site / "pagefind" / "pagefind-entry.json").read_text(encoding="utf-8"))
    assert set(entry["languages"]) == {"zh", "en"}
    assert (demo_site / "pagefind" / "pagefind.js").is_file()
    lessons = {p.parent.relative_to(demo_site).as_posix() for p in demo_site.rglob("index.html")
               if 'data-pagefind-body' in p.read_text(encoding="utf-8")}
    assert lessons == {"demo", "second", "en/demo"}
    assert sum(language["page_count"] for language in entry["languages"].values()) == len(lessons)


def test_only_lesson_text_is_indexed(demo_site):
    pages = fragments(demo_site)
    assert sorted(page["url"] for page in pages) == ["/demo/", "/en/demo/", "/second/"], "home and chapter pages are not indexed"
    words = build.load_sources(build.Paths(lessons=HERE / "lessons"))[0].ui
    for page in pages:
        lang = "en" if page["url"].startswith("/en/") else "zh"
        text = page["content"].replace("\u200b", "")  # the extended indexer separates Chinese words so
        for chrome in (words[lang]["site"]["tagline"], words[lang]["script"]["status"]["python"],
                       words[lang]["widget"]["derivation"], words[lang]["search"]["label"]):
            assert chrome not in text, f"{page['url']}: page chrome {chrome!r} is in the index"


def test_a_missing_indexer_fails_the_build_and_says_how_to_get_it(tmp_path, monkeypatch):
    out = tmp_path / "_site"
    build.build(build.Paths(lessons=HERE / "lessons", out=out))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    monkeypatch.setattr(search, "pagefind_binary", lambda node_modules: tmp_path / "no" / "pagefind_extended")
    with pytest.raises(BuildFailed) as failed:
        build.build(build.Paths(lessons=HERE / "lessons", out=out))
    [problem] = failed.value.problems
    assert problem.path == tmp_path / "no" / "pagefind_extended"
    assert "npm ci" in problem.message and "search indexer" in problem.message
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before, "the previous site is kept"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [], "no staging folder is left"


def test_an_indexer_that_fails_reports_its_exit_status_and_error(tmp_path, monkeypatch):
    fake = tmp_path / "pagefind_extended"
    fake.write_text("#!/bin/sh\necho 'Error: the index could not be written' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(search, "pagefind_binary", lambda node_modules: fake)
    with pytest.raises(BuildFailed) as failed:
        build.build(build.Paths(lessons=HERE / "lessons", out=tmp_path / "_site"))
    [problem] = failed.value.problems
    assert "exit status 3" in problem.message
    assert "Error: the index could not be written" in problem.message
    assert not (tmp_path / "_site").exists()


def test_the_binary_is_looked_up_where_npm_installs_it_for_this_platform():
    binary = search.pagefind_binary(build.Paths.node_modules)
    assert binary.parent.parent.parent == build.Paths.node_modules / "@pagefind"
    assert binary.is_file(), "npm ci installs the binary for the platform it runs on"
