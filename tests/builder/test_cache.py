"""The lesson cache (builder/cache.py): a build that takes lessons from it makes the same site, byte for byte, as
one that parses every lesson; a save parses again only the lesson it changed, and any other edit every lesson."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import build
from builder import cache
from builder.cache import Cache
from tests.lessons_copy import some_lessons

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def lessons(tmp_path) -> Path:
    """The course with four lessons written: the one whose save is timed (sampling), one whose title another's teaser
    names (quantization, named by speculative-decoding), and the one whose question the predict widget's module
    brings in (attention-variants). The cache keeps and checks each lesson on its own, so four show what sixteen
    would, in half the time a build of the course takes."""
    return some_lessons(tmp_path / "lessons", {"sampling", "quantization", "speculative-decoding", "attention-variants"})


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
    assert {p.path.name for p in failed.value.problems} == {"speculative-decoding.md"}


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


def test_the_folder_keeps_at_most_its_limit_and_the_newest_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "KEEP_FILES", 4)
    kept = Cache(tmp_path, "inputs")
    for n in range(11):
        kept.put(f"lesson {n}", "body", n)
        assert len(list(tmp_path.glob("*.pickle"))) <= 4, n
        assert kept.get(f"lesson {n}", "body") == n
    kept.put("lesson 10", "body", "again")  # in place: nothing goes
    assert kept.get("lesson 9", "body") == 9
    Cache(tmp_path, "inputs").put("lesson 11", "body", 11)  # a process of its own counts what it finds
    assert len(list(tmp_path.glob("*.pickle"))) <= 4
    assert {n for n in range(12) if kept.get(f"lesson {n}", "body") is not None} >= {10, 11}


# --- an edit to the simulator ---------------------------------------------------------------------------------
#
# The builds below read the simulator's files from a copy (Paths.sim), which the test edits, while the code that runs
# is the imported simulator, whose behaviour the test changes in step with the edit (monkeypatch): the cache sees
# the file change, the build the new behaviour, as after a save under `serve`.

@pytest.fixture
def sim(tmp_path) -> Path:
    folder = tmp_path / "sim"
    shutil.copytree(ROOT / "sim", folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.fixture
def replays(monkeypatch) -> list:
    """The pages whose replayable directives (widgets) a build drew again to check a cached parse."""
    drawn = []
    real = build.directives.replay

    def counted(ctx, *args):
        drawn.append(f"{ctx.lang}/{ctx.slug}")
        return real(ctx, *args)

    monkeypatch.setattr(build.directives, "replay", counted)
    return drawn


def save(path: Path, text: str = "\n# a comment added by a save\n") -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def changed(pages: dict[str, bytes], before: dict[str, bytes]) -> set[str]:
    """The pages that differ from `before` in more than the sim zip's name (every page names it, and an edit to
    sim/ renames it)."""
    def bare(page: bytes) -> bytes:
        return re.sub(rb"sim-[0-9a-f]+\.zip", b"sim.zip", page)
    return {path for path in pages if bare(pages[path]) != bare(before[path])}


def asking(lessons: Path, question: str | None = None) -> set[str]:
    """The pages with a predict box that asks `question` (None: any question)."""
    return {f"{page.parent.name}/{page.stem}" for page in lessons.glob("*/*.md")
            if (f"question: {question}\n" if question else "question: ") in page.read_text(encoding="utf-8")}


def test_a_sim_save_parses_again_exactly_the_lessons_whose_figures_it_changes(lessons, sim, tmp_path, parses,
                                                                            replays, monkeypatch):
    from sim.techniques import sampling

    cached = build.Paths(lessons=lessons, sim=sim, out=tmp_path / "b", cache=tmp_path / "cache")
    reference = site(cached, parses)
    parses.clear()

    # A comment: every lesson that reaches sampling.py (its figures, the predict boxes whose questions import it)
    # is checked again, figure by figure and widget by widget, and none is parsed again.
    save(sim / "techniques" / "sampling.py")
    pages, figures = site(cached, parses)
    assert parses == [] and changed(pages, reference[0]) == set()
    assert {"en/sampling", "zh/sampling"} <= set(replays)
    assert (pages, figures) == site(replace(cached, cache=None), [])
    parses.clear()
    replays.clear()
    assert site(cached, parses)[0] == pages  # kept anew for today's module: nothing drawn again
    assert parses == [] and replays == []

    # A change of what a function gives: the pages that show it are parsed again, the others come from the cache,
    # and the site is the one a build without the cache makes.
    real = sampling.holtzman_text
    monkeypatch.setattr(sampling, "holtzman_text", lambda *a, **k: "changed " + real(*a, **k))
    save(sim / "techniques" / "sampling.py", "\n# and another\n")
    pages, figures = site(cached, parses)
    assert sorted(parses) == ["en/sampling", "zh/sampling"]
    assert changed(pages, reference[0]) == {"en/sampling/index.html", "sampling/index.html"}
    assert (pages, figures) == site(replace(cached, cache=None), [])


def test_a_change_in_a_module_a_lesson_imports_indirectly_parses_its_dependents_again(lessons, sim, tmp_path,
                                                                                    parses, replays, monkeypatch):
    from sim import questions

    cached = build.Paths(lessons=lessons, sim=sim, out=tmp_path / "b", cache=tmp_path / "cache")
    reference = site(cached, parses)
    parses.clear()
    checked = []  # the widgets the blocking checks draw again
    real = build.check_widgets
    monkeypatch.setattr(build, "check_widgets", lambda *a, only, **k: checked.append(only) or real(*a, only=only, **k))
    # sim/questions/ is imported by the predict widget's module alone: a lesson reaches it through the widget.
    key = "kv-per-token-qwen3-32b"
    monkeypatch.setitem(questions.QUESTIONS, key, replace(questions.QUESTIONS[key], unit="GiB"))
    save(sim / "questions" / "attention_variants.py")  # the module that holds the question
    pages, figures = site(cached, parses)
    assert set(parses) == asking(lessons, key) and len(parses) == 2
    assert set(replays) == asking(lessons)  # every page with a predict box was drawn again
    assert checked == ["predict"]  # the one widget whose module imports sim/questions/
    assert changed(pages, reference[0]) == {
        f"{'' if lang == 'zh' else lang + '/'}{slug}/index.html" for lang, slug in (p.split("/") for p in parses)}
    assert (pages, figures) == site(replace(cached, cache=None), [])


def test_an_edit_to_a_module_no_lesson_reaches_checks_nothing_and_one_the_builder_calls_parses_all(
        lessons, sim, tmp_path, parses, replays):
    cached = build.Paths(lessons=lessons, sim=sim, out=tmp_path / "b", cache=tmp_path / "cache")
    reference = site(cached, parses)
    every = len(parses)
    parses.clear()
    (sim / "unused.py").write_text('"""A module nothing imports."""\n', encoding="utf-8")
    pages, figures = site(cached, parses)
    assert changed(pages, reference[0]) == set() and figures == reference[1]
    assert parses == [] and replays == []
    # The kit's own modules run outside any figure or widget (the builder draws the controls with them): an edit
    # parses every lesson again.
    save(sim / "kit" / "layout.py")
    assert changed(site(cached, parses)[0], reference[0]) == set()
    assert len(parses) == every and replays == []
