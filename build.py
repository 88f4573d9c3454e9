#!/usr/bin/env python3
"""inferlab's site builder: lessons/ through site/templates/ into _site/.

    python build.py build [--out DIR]   build the site (problems: file:line: message, exit status 2)
    python build.py check               build into a temporary folder, report problems, keep nothing
    python build.py serve [--port N]    build, serve on 127.0.0.1, rebuild when a source changes
    python build.py new lesson SLUG     write a lesson's skeleton, one that builds (new widget NAME: a widget's)

Stages: load sources (lessons, course plan, catalogs, glossary) -> check the words and widgets -> parse
each lesson (Markdown, directives, math; widgets pre-rendered by sim/) -> check links and ids -> render
pages (Jinja) -> write (a temporary folder, given its search index by Pagefind's binary, then swapped into
place; the old site is kept if anything failed).
Every problem of every stage is gathered first and reported together. This file knows no lesson or
widget by name.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path

import jinja2

from builder import cache, contents, directives, frozen, new, parts, seeds, urls, usage
from builder.assets import bundle_stylesheets, module_graph, pack_sim, script_files, static_files, vendor_files
from builder.catalogs import Catalog, check_catalogs, check_text_blocks, load_catalog
from builder.context import LessonContext, LinkUse, WidgetUse
from builder.course import Chapter, Course, load_plan, make_course
from builder.directives.evolution import map_html
from builder.expressions import claimed, evaluated, namespace
from builder.frozen import Code, Frozen
from builder.lessons import SourceLesson, load_lessons
from builder.markdown import make_markdown, render_lesson_markdown
from builder.offline import service_worker
from builder.problems import BuildFailed, LessonError, Problem, did_you_mean
from builder.search import INDEX_DIR, index_site
from builder.serve import Rebuilder, serve
from builder.stdlib import Stdlib, StdlibError, cut_stdlib
from builder.templates import js_number, json_island, make_templates  # noqa: F401  (js_number: tests, bench)
from builder.terms import Term, load_terms
from builder.usage import Missing, Usage, untranslated_note
from builder.widgets import check_widgets, is_question
from sim import widgets
from sim.page.languages import DEFAULT, LANGUAGES

ROOT = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Paths:
    lessons: Path = ROOT / "lessons"
    templates: Path = ROOT / "site" / "templates"
    static: Path = ROOT / "site" / "static"
    service_worker: Path = ROOT / "site" / "sw.js"  # written to the site's root with the build's manifest
    catalogs: Path = ROOT / "site" / "i18n"  # the page chrome's words, one <lang>.yml per language
    sim: Path = ROOT / "sim"
    node_modules: Path = ROOT / "node_modules"
    # The standard library cut for this simulator, committed (builder/stdlib.py): a fresh clone's first build takes
    # it from here rather than tracing it; a build that writes the frozen figures renews it.
    stdlib: Path = ROOT / "site" / "stdlib"
    out: Path = ROOT / "_site"
    dev: bool = False  # pages reload themselves after a rebuild (serve)
    # The frozen figures, lessons/frozen.json (builder/frozen.py): "read" takes what it holds for the same simulator
    # code, "write" also writes it back after a build that succeeds (build.py build, serve), "none" computes all,
    # "seeds" takes only the figures on the ten other seeds (builder/seeds.py) and computes the rest (a test's check
    # of the store against the code).
    frozen: str = "read"
    # The lesson cache (builder/cache.py): where each lesson's parse is kept for the next build of the same inputs;
    # None keeps nothing (a build from a fresh clone, and the tests, unless they test the cache). build.py's
    # commands keep it in CACHE.
    cache: Path | None = None


CACHE = ROOT / "node_modules" / ".cache" / "inferlab" / "lessons"


@dataclass(frozen=True)
class Sources:
    """Everything read from disk before any lesson is parsed."""

    lessons: list[SourceLesson]
    course: Course
    terms: dict[str, Term]
    ui: dict[str, dict]  # lang -> the page chrome's words (site/i18n/<lang>.yml) as nested dicts
    # Which widgets, questions and terms each language's pages use: their words are required in those languages
    # (builder/usage.py); `missing`, the glossary's words other languages have and a language lacks where no page
    # needs them (the simulator's are found with the blocking checks, build_site).
    usage: Usage = Usage()
    missing: tuple[Missing, ...] = ()


@dataclass(frozen=True)
class ParsedLesson:
    source: SourceLesson
    html: str
    widgets: tuple[WidgetUse, ...]
    links: tuple[LinkUse, ...]
    ids: frozenset[str]  # every element id of the body: the targets #fragment links may name
    sections: frozenset[str]  # ids of its headings and widgets: where a reader can be when switching language
    scripted: bool
    expressions: tuple[tuple[str, int], ...] = ()  # its {sim} expressions, each with its line
    contents: tuple[contents.Section, ...] = ()  # its <h2> sections, for the contents list
    holding: tuple[tuple[str, contents.Section], ...] = ()  # element id -> the section it lies in
    # Its parse's calls of the directives that draw from the simulator (builder/directives REPLAYABLE), each with
    # its outcome: drawn again, they tell whether a cached parse still holds after an edit to sim/ (lesson_cache).
    replays: tuple[tuple[str, str, str, int, str, tuple[str, ...]], ...] = ()


def load_sources(paths: Paths) -> tuple[Sources, list[Problem], list[Problem]]:
    """Lessons, course plan, catalogs and glossary, with the problems found in them: those of single lessons
    and the plan, and those that stop every page (a catalog that lacks words the templates need)."""
    lessons, problems = load_lessons(paths.lessons)
    blocking: list[Problem] = []
    site_catalogs = _load_catalogs({lang: paths.catalogs / f"{lang}.yml" for lang in LANGUAGES}, blocking)
    course_catalogs = _load_catalogs({lang: paths.lessons / lang / "catalog.yml" for lang in LANGUAGES
                                      if (paths.lessons / lang).is_dir()}, blocking, required=False)
    blocking += check_catalogs(site_catalogs)  # a course catalog's words are checked by the plan and glossary
    plan_path = paths.lessons / "course.yml"
    plan, found = load_plan(plan_path)
    course, more = make_course(plan, plan_path, lessons, course_catalogs)
    scanned = cache.Cache(paths.cache, cache.inputs([ROOT / "build.py"], [ROOT / "builder"], [])) if paths.cache \
        else None
    used, missing = usage.scan(lessons, scanned), []
    terms, most = load_terms(paths.lessons / "terms.yml", course_catalogs, used, missing)
    problems += found + more + most
    ui = {lang: catalog.tree() for lang, catalog in site_catalogs.items()}
    return Sources(lessons, course, terms, ui, used, tuple(missing)), problems, blocking


def _load_catalogs(files: dict[str, Path], problems: list[Problem], required: bool = True) -> dict[str, Catalog]:
    catalogs = {}
    for lang, path in files.items():
        catalogs[lang], found = load_catalog(path, lang, required)
        problems += found
    return catalogs


def parse_lesson(source: SourceLesson, sources: Sources, templates: jinja2.Environment,
                 names: dict, store: Frozen) -> tuple[ParsedLesson, list[Problem]]:
    """The lesson's body as HTML with every directive rendered, and the problems found in it."""
    md = make_markdown()
    errors = []
    ctx = page_context(source.lang, source.slug, sources, templates, names, store)
    ctx.replays = []
    ctx.render_markdown = lambda text, line: render_lesson_markdown(md, text, line, ctx, errors)
    html = parts.with_heights(render_lesson_markdown(md, source.body, source.body_line, ctx, errors, parts=True))
    problems = list(dict.fromkeys(Problem(source.path, e.line, e.message) for e in errors))  # nested bodies repeat
    for line, check in ctx.checks:
        if (message := check(ctx)) is not None:
            problems.append(Problem(source.path, line, message))
    problems += check_ids(source.path, ctx.ids)
    found, holding = contents.headings(html)
    parsed = ParsedLesson(source, html, tuple(ctx.widgets), tuple(ctx.links), frozenset(i for i, _ in ctx.ids),
                          frozenset(ctx.sections), ctx.scripted, tuple(ctx.expressions), tuple(found),
                          tuple(holding.items()), tuple(ctx.replays))
    return parsed, problems


def page_context(lang: str, slug: str, sources: Sources, templates: jinja2.Environment, names: dict,
                 store: Frozen) -> LessonContext:
    """A fresh parse state for the page of `slug` (a lesson's or a chapter's) in `lang`."""
    return LessonContext(lang=lang, slug=slug, templates=templates, course=sources.course, terms=sources.terms,
                         ui=sources.ui[lang], names=names, frozen=store)


def _parse_lessons(sources: Sources, templates: jinja2.Environment, names: dict, store: Frozen,
                   kept: cache.Cache) -> tuple[list[ParsedLesson], set[str], list[Problem], list]:
    """Every lesson parsed, or taken from the lesson cache: the lessons, the slugs of those with problems, the
    problems, and what to keep in the cache (each lesson parsed here without a problem, with the frozen entries
    its parse took and the simulator modules it ran)."""
    parsed, broken, problems, fresh = [], set(), [], []
    for source in sources.lessons:
        name = f"lesson {source.path}"
        taken = _taken(kept, name, repr(source), store, lambda s=source: page_context(
            s.lang, s.slug, sources, templates, names, store), names, fresh)
        if taken is not None:
            parsed.append(ParsedLesson(*taken))
            continue
        store.trail, store.reached = {}, set()
        try:
            lesson, found = parse_lesson(source, sources, templates, names, store)
        finally:
            trail, store.trail = store.trail, None
        parsed.append(lesson)
        problems += found
        if found:
            broken.add(source.slug)
        else:
            # Its fields rather than itself: this file is __main__ when run and `build` when imported, and a pickle
            # names the class by its module.
            fresh.append((name, repr(source), _entry(kept, astuple_shallow(lesson), trail, store.reached,
                                                     lesson.replays)))
    return parsed, broken, problems, fresh


def _entry(kept: cache.Cache, value, trail: dict, reached: set[str], replays) -> tuple | None:
    """What the lesson cache keeps of a parse: its result, the frozen entries it took, and what of the simulator it
    ran (the modules reached and the builder's own, each with its file's hash) with its replayable calls."""
    if kept.folder is None:
        return None  # nothing is kept: the import walk is not paid for
    roots = reached | kept.sim_roots
    return value, trail, tuple(sorted(roots)), _ran(kept, roots, reached), tuple(replays)


def _ran(kept: cache.Cache, roots: set[str], reached: set[str]) -> dict[str, str]:
    """The modules `roots` import, each with its file's hash, and the frozen figures' fingerprint of each module
    reached (under "fingerprint MODULE"): the trail's fingerprints come from these, and a fingerprint also counts the
    modules a module loads by name, which the import statements do not show."""
    return {**kept.code.closure(roots), **{f"fingerprint {m}": kept.code.module(m) for m in sorted(reached)}}


def _taken(kept: cache.Cache, name: str, key: str, store: Frozen, context: Callable[[], LessonContext] | None,
           names: dict, fresh: list):
    """The value kept under `name` if it still holds, else None. It holds when its inputs are the same
    (cache.Cache.get) and so is every simulator module it ran; or, where only modules that its figures' names and
    widgets reached have changed (not the kit and the other modules the builder calls itself), when every figure,
    claim and widget it took comes out the same drawn again now (in pages made by `context`; None: not drawn again,
    the value is made anew): then it is kept anew (`fresh`) under today's modules, and the frozen figures it took
    are today's."""
    if (taken := kept.get(name, key)) is None:
        return None
    value, trail, roots, ran, replays = taken
    now = _ran(kept, set(roots), {m.split(" ", 1)[1] for m in ran if m.startswith("fingerprint ")})
    if now == ran:
        store.restore(trail)
        return value
    changed = {m for m in now.keys() | ran.keys() if now.get(m) != ran.get(m)}
    if context is None or changed & kept.sim_base.keys():
        return None
    again = _drawn_again(trail, replays, store, context, names, lambda mods: any(
        m in changed for m in kept.code.closure(set(mods))))
    if again is None:
        return None
    trail, reached = again
    fresh.append((name, key, _entry(kept, value, trail, reached, replays)))
    return value


def _drawn_again(trail: dict, replays, store: Frozen, context: Callable[[], LessonContext], names: dict,
                 touched: Callable[[tuple[str, ...]], bool]):
    """Every figure, claim and replayable directive of a cached parse, through the store as a parse takes them (a
    directive only if `touched` says a module it reached has changed; the others' frozen entries are taken as they
    were): the new trail and the modules reached if each comes out as it did, else None (the parse must be made
    again)."""
    store.trail, store.reached = {}, set()
    try:
        for kind, key in trail:
            if kind == "expressions":
                store.expression(key, names, lambda k=key: evaluated(k, names))
            elif kind == "claims":
                store.claim(key, names, lambda k=key: claimed(k, names))
            elif kind == "seeds" and store.seeds(key, names) is None:
                return None  # its other seeds are new: the parse asks for them
        for name, args, body, line, outcome, reached in replays:
            if not touched(reached):
                store.reached |= set(reached)
                continue
            if directives.replay(context(), name, args, body, line) != outcome:
                return None
    except Exception:  # noqa: BLE001 - whatever the new code raises, the parse reports at its line
        return None
    finally:
        again, store.trail = store.trail, None
    for key, entry in trail.items():
        if key[0] == "views" and key not in again:  # a slow widget's view whose directive was not drawn again
            module = widgets.load(key[1].split(" ", 1)[0]).__name__
            if store.code.module(module) != entry[0]:  # its fingerprint also counts modules loaded by name
                return None
            again[key] = entry
            store.restore({key: entry})
    if again.keys() != trail.keys() or any(again[k][1] != trail[k][1] for k in trail):
        return None
    return again, store.reached


def _chapter_maps(sources: Sources, templates: jinja2.Environment, names: dict, store: Frozen,
                  kept: cache.Cache) -> tuple[dict[tuple[str, str], str], list[Problem], list]:
    """Each chapter page's evolution map, the whole of it with the chapter's steps marked, per language with pages
    and a map: (lang, chapter) -> HTML, the problems (at the map's own lines), and what to keep in the lesson cache.
    Its {sim} figures are the lessons' own, so they come from the frozen figures (or the lesson cache) like theirs."""
    course = sources.course
    maps, problems, fresh = {}, [], []
    for lang in course.languages():
        chart = course.evolution.get(lang)
        if chart is None:
            continue
        for chapter in course.chapters:
            name = f"chapter {lang} {chapter.slug}"
            context = functools.partial(page_context, lang, chapter.slug, sources, templates, names, store)
            if (taken := _taken(kept, name, "", store, context, names, fresh)) is not None:
                maps[(lang, chapter.slug)] = taken
                continue
            ctx = context()
            ctx.replays = []
            store.trail, store.reached = {}, set()
            try:
                shown = map_html(ctx, chart, None, lambda item, c=chapter: item.lesson in c.lessons,
                                 sources.ui[lang]["chapter"]["in_chapter"], step=False)
                found = [Problem(chart.path, line, f"on the page of chapter {chapter.slug!r}: {message}")
                         for line, check in ctx.checks if (message := check(ctx)) is not None]
            except LessonError as e:
                shown, found = "", [Problem(chart.path, each.line, f"on the page of chapter {chapter.slug!r}: "
                                                                   f"{each.message}")
                                    for each in getattr(e, "errors", [e])]
            finally:
                trail, store.trail = store.trail, None
            maps[(lang, chapter.slug)] = shown
            problems += found
            if not found:
                fresh.append((name, "", _entry(kept, shown, trail, store.reached, ctx.replays)))
    return maps, problems, fresh


def astuple_shallow(lesson: ParsedLesson) -> tuple:
    return tuple(getattr(lesson, f.name) for f in fields(ParsedLesson))


def lesson_cache(paths: Paths, sources: Sources, store: Frozen) -> cache.Cache:
    """The lesson cache for these sources: its entries hold for the inputs builder/cache.py lists. The simulator's
    code is not among them: each entry holds for the modules its parse ran (_taken)."""
    if paths.cache is None or store.code is None:
        return cache.Cache(None, "")
    pages = {lesson.path.resolve() for lesson in sources.lessons}
    others = [p for p in paths.lessons.rglob("*") if p.is_file() and p.resolve() not in pages
              and p.name != frozen.FILE and "__pycache__" not in p.parts]
    data = [p for p in paths.sim.rglob("*") if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts]
    front = [repr((str(s.path), s.lang, s.slug, s.title, s.summary, s.minutes)) for s in sources.lessons]
    digest = cache.inputs([ROOT / "build.py", *others, *data],
                          [ROOT / "builder", paths.templates, paths.static, paths.catalogs],
                          [f"dev {paths.dev}", f"lessons {paths.lessons}", f"sim {paths.sim}", *front])
    roots = builder_roots(store.code.memo)
    return cache.Cache(paths.cache, digest, store.code, roots, store.code.closure(roots))


def builder_roots(memo: Path | None) -> set[str]:
    """The simulator modules the builder's own code imports (the kit, the languages, the formatters…), whose code a
    parse may run outside any figure or widget; not those of the file that makes the names of {sim} expressions
    (builder/expressions.py), which a parse reaches only through an expression's names."""
    namespace_file = Path(sys.modules[namespace.__module__].__file__).resolve()
    found = set()
    for path in [ROOT / "build.py", *sorted((ROOT / "builder").rglob("*.py"))]:
        if path.resolve() == namespace_file or "__pycache__" in path.parts:
            continue
        package = path.relative_to(ROOT).parent.parts
        named, _ = frozen.named_imports(path.read_bytes(), path, package, memo)
        found |= {name for name in named if name == "sim" or name.startswith("sim.")}
    return found


def check_ids(path: Path, ids: list[tuple[str, int]]) -> list[Problem]:
    """No two elements of a page share an id: a link to it, or a widget's URL state, would be ambiguous."""
    lines = defaultdict(list)
    for element_id, line in ids:
        lines[element_id].append(line)
    return [Problem(path, found[1], f"id {element_id!r} is used twice on this page (lines {found[0]} and "
                                    f"{found[1]}); give one of them another id")
            for element_id, found in lines.items() if len(found) > 1]


def check_languages(lessons: list[ParsedLesson]) -> list[Problem]:
    """A lesson is one lesson in every language: each page of it evaluates the same {sim} and {claim} expressions as
    the page in the default language, and starts the same widgets (by id) in the same state. A difference is reported
    on the page that has the expression or the widget, at its line, naming the page that lacks it. (The build leaves
    out the lessons with problems of their own: a widget that failed is missing from its page for that reason
    alone.)"""
    pages = defaultdict(dict)
    for lesson in lessons:
        pages[lesson.source.slug][lesson.source.lang] = lesson
    problems = []
    for versions in pages.values():
        if DEFAULT not in versions:
            continue
        base = versions[DEFAULT]
        for lang, other in versions.items():
            if lang == DEFAULT:
                continue
            for one, two in ((base, other), (other, base)):
                theirs = {expr for expr, _ in two.expressions}
                first = {}
                for expr, line in one.expressions:
                    first.setdefault(expr, line)
                for expr, line in first.items():
                    if expr not in theirs:
                        problems.append(Problem(one.source.path, line, f"{expr} is not on the "
                                                f"{two.source.lang} page of this lesson ({two.source.path.name}): "
                                                "every language of a lesson evaluates the same figures and claims"))
                settings = {w.id: w for w in two.widgets}
                for w in one.widgets:
                    twin = settings.get(w.id)
                    if twin is None:
                        problems.append(Problem(one.source.path, w.line, f"widget {w.id!r} is not on the "
                                                f"{two.source.lang} page of this lesson"))
                    elif one is base and (twin.name, twin.setting) != (w.name, w.setting):
                        problems.append(Problem(other.source.path, twin.line, f"widget {w.id!r} starts otherwise "
                                                f"than on the {DEFAULT} page ({base.source.path.name}:{w.line}): "
                                                f"{twin.setting} here, {w.setting} there"))
    return problems


def check_links(lessons: list[ParsedLesson]) -> list[Problem]:
    """Every #fragment a lesson links to exists on the page it names, in the same language."""
    pages = {(lesson.source.lang, lesson.source.slug): lesson for lesson in lessons}
    problems = []
    for lesson in lessons:
        for link in lesson.links:
            target = lesson if link.slug is None else pages.get((lesson.source.lang, link.slug))
            if target is None:
                problems.append(Problem(lesson.source.path, link.line,
                                        f"link to lesson {link.slug!r}, which has no {lesson.source.lang} page"))
            elif link.fragment and link.fragment not in target.ids:
                page = "this page" if link.slug is None else f"lesson {link.slug!r}"
                problems.append(Problem(lesson.source.path, link.line, f"#{link.fragment} is not an id on {page}"
                                        + did_you_mean(link.fragment, target.ids)))
    return problems


def render_pages(lessons: list[ParsedLesson], sources: Sources, templates: jinja2.Environment,
                 sim_zip: str, stdlib_zip: str, maps: dict[tuple[str, str], str] | None = None) -> dict[str, str]:
    """Site path -> HTML of every page: each lesson, and per language that has lessons a home page and a page per
    chapter (`maps`: each chapter page's evolution map, from _chapter_maps)."""
    course = sources.course
    versions = {(lesson.source.lang, lesson.source.slug): lesson for lesson in lessons}
    languages = course.languages()
    chapters = {chapter.slug for chapter in course.chapters}  # a chapter's page exists in every language with pages
    maps = maps or {}
    pages = {}

    def common(lang: str, slug: str | None) -> dict:
        page = urls.page(lang, slug)
        ui = sources.ui[lang]
        return {"lang": lang, "ui": ui, "root": urls.root(page), "home": urls.link(page, urls.page(lang)),
                "sim_zip": sim_zip, "stdlib_zip": stdlib_zip, "page_text": json_island(ui["script"]),
                "alternates": alternates(lang, slug), "switch": switch(lang, slug)}

    def exists(lang: str, slug: str | None) -> bool:
        return slug is None or slug in chapters or (lang, slug) in versions

    def alternates(lang: str, slug: str | None) -> list[dict]:
        """This page in every language it exists in (itself included), for <link rel="alternate" hreflang>."""
        page = urls.page(lang, slug)
        return [{"lang": other, "href": urls.link(page, urls.page(other, slug))} for other in languages
                if exists(other, slug)]

    def switch(lang: str, slug: str | None) -> list[dict]:
        """Links to this page in each other language (its home page where the lesson is not written in it), with
        the sections both versions of a lesson share, so that the page script can keep the reader's place."""
        page, links = urls.page(lang, slug), []
        for other in languages:
            if other == lang:
                continue
            there = slug if exists(other, slug) else None
            shared = (versions[(lang, slug)].sections & versions[(other, slug)].sections) \
                if there and (lang, slug) in versions else frozenset()
            links.append({"lang": other, "href": urls.link(page, urls.page(other, there)),
                          "name": sources.ui[other]["language"]["name"], "same_page": there == slug,
                          "sections": " ".join(sorted(shared))})
        return links

    def pager(lang: str, slug: str) -> dict:
        """The lessons before and after this one in the course, among those written in its language: across a
        chapter's end as within a chapter."""
        written = [s.slug for s in course.lessons(lang)]
        at, page = written.index(slug), urls.page(lang, slug)
        near = {"prev": written[at - 1] if at > 0 else None, "next": written[at + 1] if at + 1 < len(written) else None}
        return {rel: {"href": urls.link(page, urls.page(lang, other)), "title": versions[(lang, other)].source.title}
                for rel, other in near.items() if other}

    def chapter_entry(lang: str, number: int, chapter: Chapter, page: str) -> dict:
        """A chapter as the home page and its own page show it, links relative to `page`: its words, its lessons
        (written ones with their minutes and number of questions, the others upcoming), and what the page script
        counts for its progress: its questions' keys and its sections, SLUG#ID each (static/js/progress.js)."""
        ui, first = sources.ui[lang], course.plan.index(chapter.lessons[0]) + 1
        entries, keys, sections = [], [], []
        for slug in chapter.lessons:
            written = versions.get((lang, slug))
            entries.append({"slug": slug, "title": course.title(lang, slug) or slug,
                            "href": urls.link(page, urls.page(lang, slug)) if written else None,
                            "summary": written.source.summary if written else None,
                            "minutes": written.source.minutes if written else None,
                            "questions": len(questions(written)) if written else 0})
            if written:
                keys += [f"{slug}#{use.id}" for use in questions(written)]
                sections += [f"{slug}#{section.id}" for section in written.contents]
        count, done = len(entries), [entry for entry in entries if entry["href"]]
        minutes = sum(entry["minutes"] for entry in done)
        size = ("size" if len(done) == count else "size_partial" if done else "size_planned")
        return {"slug": chapter.slug, "number": ui["chapter"]["number"].format(n=number),
                "title": course.chapter_word(lang, chapter.slug, "title"),
                "summary": course.chapter_word(lang, chapter.slug, "summary"),
                "href": urls.link(page, urls.page(lang, chapter.slug)), "lessons": entries, "start": first,
                "size": ui["chapter"][size].format(count=count, written=len(done), minutes=minutes),
                "minutes": minutes, "questions": " ".join(keys), "sections": " ".join(sections)}

    for lesson in lessons:
        lang, slug = lesson.source.lang, lesson.source.slug
        sections = list(lesson.contents)
        chapter = course.chapter_of(slug)
        number = course.chapters.index(chapter) + 1
        home_of = {"href": urls.link(urls.page(lang, slug), urls.page(lang, chapter.slug)),
                   "number": sources.ui[lang]["chapter"]["number"].format(n=number),
                   "title": course.chapter_word(lang, chapter.slug, "title")}
        # The page script runs for the widgets and formulas, and to mark the sections read (static/js/progress.js).
        pages[urls.page_file(lang, slug)] = templates.get_template("lesson.html").render(
            **common(lang, slug), lesson=lesson.source, body=lesson.html, scripted=lesson.scripted or bool(sections),
            python=bool(lesson.widgets), contents=sections, pager=pager(lang, slug), chapter=home_of)
    for lang in languages:
        page = urls.page(lang)
        course_map = [{"slug": slug, "href": urls.link(page, urls.page(lang, slug)) if written else None,
                       "title": title} for slug, written, title in course.plan_in(lang)]
        revisit = [entry for lesson in course_map if lesson["href"]
                   for entry in question_entries(sources.ui[lang], lesson, versions[(lang, lesson["slug"])])]
        shown = [chapter_entry(lang, n, chapter, page) for n, chapter in enumerate(course.chapters, start=1)]
        pages[urls.page_file(lang)] = templates.get_template("index.html").render(
            **common(lang, None), chapters=shown, questions=revisit, scripted=True, python=False)
        for n, chapter in enumerate(course.chapters, start=1):
            here = urls.page(lang, chapter.slug)
            near = {"prev": course.chapters[n - 2] if n > 1 else None,
                    "next": course.chapters[n] if n < len(course.chapters) else None}
            # The page script shows the chapter's progress (static/js/progress.js) and keeps the page for offline
            # reading once visited, as the home page (site/sw.js): no search index entry, no Python.
            pages[urls.page_file(lang, chapter.slug)] = templates.get_template("chapter.html").render(
                **common(lang, chapter.slug), chapter=chapter_entry(lang, n, chapter, here),
                evolution=maps.get((lang, chapter.slug), ""), scripted=True, python=False,
                pager={rel: {"href": urls.link(here, urls.page(lang, other.slug)),
                             "title": course.chapter_word(lang, other.slug, "title")}
                       for rel, other in near.items() if other})
        # What the service worker shows, offline, for a page it has not kept (site/sw.js).
        pages[urls.page_file(lang, urls.OFFLINE)] = templates.get_template("offline.html").render(
            **common(lang, urls.OFFLINE), scripted=False, python=False)
    return pages


def questions(lesson: ParsedLesson) -> list[WidgetUse]:
    """A lesson's questions, in page order: the widgets whose answers the page grades (builder/widgets.py
    is_question). The home page counts them and lists each one, for the student's progress."""
    return [use for use in lesson.widgets if is_question(use.flags)]


def question_entries(ui: dict, lesson: dict, parsed: ParsedLesson) -> list[dict]:
    """The home page's entry for each of a lesson's questions: its key in the student's progress (`SLUG#ID`, the
    same in every language), its link, and its name: the lesson and the heading of the section holding it."""
    holding = dict(parsed.holding)
    entries = []
    for n, use in enumerate(questions(parsed), start=1):
        section = holding.get(use.id)
        label = (ui["progress"]["question"].format(lesson=lesson["title"], n=n, section=section.title) if section
                 else ui["progress"]["question_top"].format(lesson=lesson["title"], n=n))
        entries.append({"key": f"{lesson['slug']}#{use.id}", "href": f"{lesson['href']}#{use.id}", "label": label})
    return entries


def frozen_store(paths: Paths) -> Frozen:
    """The frozen figures a build of these lessons may take (none if paths.frozen says so)."""
    if paths.frozen not in ("read", "write", "none", "seeds"):
        raise ValueError(f"Paths.frozen is read, write, none or seeds, got {paths.frozen!r}")
    return Frozen(paths.lessons / frozen.FILE if paths.frozen != "none" else None,
                  Code(paths.sim, (ROOT / "builder" / "expressions.py", ROOT / "builder" / "seeds.py"),
                       memo=paths.cache and paths.cache.parent / "imports"),
                  reuse=("seeds",) if paths.frozen == "seeds" else frozen.KINDS)


def build_site(paths: Paths, store: Frozen | None = None, notes: list[str] | None = None) -> dict[str, bytes | Path]:
    """Everything the site holds, by site path: page text as bytes, copied files as source paths. `notes` gets what
    the author should know of a build that succeeded (the words a translation will need, builder/usage.py)."""
    store = store or frozen_store(paths)
    sources, problems, blocking = load_sources(paths)
    css_path, css_bytes = bundle_stylesheets(paths.static)
    scripts, script_paths = script_files(paths.static)
    templates = make_templates(paths.templates, paths.cache and paths.cache.parent / "templates",
                               stylesheet=css_path, scripts=scripts, dev=paths.dev,
                               page_modules=module_graph(paths.static / "js", "page.js"))
    kept = lesson_cache(paths, sources, store)
    missing = list(sources.missing)
    if blocking:
        blocking += check_text_blocks(paths.sim, sources.usage, missing)
    else:
        blocking += _blocking_checks(paths, templates, sources, store, kept, missing)
    if blocking:  # no page can be drawn with words or widgets missing
        raise BuildFailed(problems + blocking)
    names = namespace()
    parsed, broken, found_before, fresh = _parse_lessons(sources, templates, names, store, kept)
    if store.pending:  # figures from random traces whose ten other seeds are new: all at once, then parse again
        store.compute_pending(seeds.others)
        parsed, broken, found_before, fresh = _parse_lessons(sources, templates, names, store, kept)
    for name, key, value in fresh:
        kept.put(name, key, value)
    problems += found_before
    problems += check_links(parsed)
    problems += check_languages([lesson for lesson in parsed if lesson.source.slug not in broken])
    problems += [Problem(source.path, 1, f"the slug {urls.OFFLINE!r} is the offline page's address, not a lesson's")
                 for source in sources.lessons if source.slug == urls.OFFLINE]
    if problems:
        raise BuildFailed(problems)
    # The chapters' maps once the lessons are sound: a problem in the map is reported once, where a lesson shows it.
    maps, found, fresh = _chapter_maps(sources, templates, names, store, kept)
    if store.pending:  # a figure no lesson shows (a language whose lessons leave the map out)
        store.compute_pending(seeds.others)
        maps, found, fresh = _chapter_maps(sources, templates, names, store, kept)
    if found:
        raise BuildFailed(found)
    for name, key, value in fresh:
        kept.put(name, key, value)
    if notes is not None:
        notes += untranslated_note(missing, sources.usage, sources.lessons)
    sim_zip, sim_bytes = pack_sim(paths.sim, paths.node_modules / ".cache" / "inferlab")
    stdlib = python_stdlib(paths, sim_bytes)
    files: dict[str, bytes | Path] = {path: html.encode() for path, html in
                                      render_pages(parsed, sources, templates, sim_zip, stdlib.site_path,
                                                                   maps).items()}
    files[sim_zip] = sim_bytes
    files[stdlib.site_path] = stdlib.data
    files[css_path] = css_bytes
    files.update(static_files(paths.static))
    files.update(script_paths)
    try:
        files.update(vendor_files(paths.node_modules))
    except FileNotFoundError as e:
        raise BuildFailed([Problem(paths.node_modules, 1, str(e))]) from None
    files[".nojekyll"] = b""
    if paths.dev:
        files["__build_id"] = str(time.time_ns()).encode()
    return files


def _blocking_checks(paths: Paths, templates: jinja2.Environment, sources: Sources, store: Frozen,
                     kept: cache.Cache, missing: list[Missing]) -> list[Problem]:
    """The simulator's words in the languages whose pages need them, and every widget rendered with its defaults in
    those languages; words a language lacks where no page needs them are added to `missing`. A widget's drawing is
    taken from the lesson cache when it passed for the same inputs, the same languages and the same modules (its
    own and those it imports), so that an edit to one module draws again only the widgets that import it."""
    problems = check_text_blocks(paths.sim, sources.usage, missing, kept if kept.folder else None)
    if problems:
        return problems
    fresh: list = []
    for name in widgets.names():
        entry, needed = f"check widget {name}", repr(sorted(sources.usage.languages(usage.WIDGET, name)))
        if _taken(kept, entry, needed, store, None, {}, fresh) is not None:  # drawing it again is the check
            continue
        store.trail, store.reached = {}, set()
        try:
            found = check_widgets(templates, sources.ui, store, sources.usage, only=name)
        finally:
            trail, store.trail = store.trail, None
        problems += found
        if not found:
            fresh.append((entry, needed, _entry(kept, True, trail, store.reached, ())))
    for entry, needed, value in fresh:
        kept.put(entry, needed, value)
    return problems


def python_stdlib(paths: Paths, sim_bytes: bytes) -> Stdlib:
    """The standard library cut to what this simulator imports (builder/stdlib.py); BuildFailed if it cannot be."""
    try:
        return cut_stdlib(paths.node_modules, sim_bytes, kept=paths.stdlib, keep=paths.frozen == "write")
    except StdlibError as e:
        raise BuildFailed([Problem(paths.sim, 1, str(e))]) from None


def write_site(files: dict[str, bytes | Path], out: Path, finish: Callable[[Path], None] | None = None) -> None:
    """Write into a fresh folder beside `out`, let `finish` add to it (the search index), then swap it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    try:
        for rel, content in files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                _copy(content, target)
            else:
                target.write_bytes(content)
        staging.chmod(0o755)
        if finish is not None:
            finish(staging)
        old = out.parent / f".{out.name}-old-{os.getpid()}"
        if out.exists():
            out.rename(old)
        staging.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _copy(source: Path, target: Path) -> None:
    """Hard-link where possible (vendored files are large and never edited in place), else copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def build(paths: Paths, notes: list[str] | None = None) -> float:
    """Build the site into paths.out; returns seconds taken, and adds to `notes` what build_site says. Raises
    BuildFailed, leaving the old site."""
    started = time.perf_counter()
    store = frozen_store(paths)
    try:
        files = build_site(paths, store, notes)
    except BuildFailed:
        if paths.frozen == "write":
            store.save(failed=True)
        raise

    offline = {urls.page(lang): urls.page(lang, urls.OFFLINE) for lang in LANGUAGES
               if urls.page_file(lang, urls.OFFLINE) in files}
    # Under `serve`, the page reloads as soon as the new site is in place, with the last search index; the new
    # index follows half a second later (Pagefind reads every page). A dev page has no service worker to list it.
    later = paths.dev and (paths.out / INDEX_DIR).is_dir()

    def finish(site: Path) -> None:
        """The search index, then the service worker, whose manifest lists the index's files too."""
        if later:
            shutil.copytree(paths.out / INDEX_DIR, site / INDEX_DIR, copy_function=_copy)
        else:
            index_site(site, paths.node_modules)
        index = {path.relative_to(site).as_posix(): path for path in (site / INDEX_DIR).rglob("*") if path.is_file()}
        (site / "sw.js").write_bytes(service_worker(paths.service_worker, {**files, **index}, offline))

    write_site(files, paths.out, finish=finish)
    seconds = time.perf_counter() - started
    if paths.frozen == "write":
        store.save()
    if later:
        renew_index(paths.out, paths.node_modules)
    return seconds


def renew_index(site: Path, node_modules: Path) -> None:
    """A new search index for the pages of a site in place, swapped for its old one; a failure is reported and leaves
    the old index (the pages are already there)."""
    fresh, old = site / f"{INDEX_DIR}.new", site / f"{INDEX_DIR}.old"
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        index_site(site, node_modules, subdir=fresh.name, background=True)
    except BuildFailed as failed:
        shutil.rmtree(fresh, ignore_errors=True)
        for problem in failed.problems:
            print(f"{_relative(problem)} (the search index is the last build's)", file=sys.stderr)
        return
    shutil.rmtree(old, ignore_errors=True)
    (site / INDEX_DIR).rename(old)
    fresh.rename(site / INDEX_DIR)
    shutil.rmtree(old, ignore_errors=True)


def report(failed: BuildFailed, command: str = "build") -> None:
    """Every problem, sorted by file and line, then one line that says what became of the site (`check` writes
    none)."""
    for problem in sorted(failed.problems, key=lambda p: (str(p.path), p.line)):
        print(_relative(problem), file=sys.stderr)
    count = f"{len(failed.problems)} problem(s)"
    print(f"check failed: {count}" if command == "check" else f"build failed: {count}; the previous site is unchanged",
          file=sys.stderr)


def _relative(problem: Problem) -> str:
    try:
        return str(Problem(problem.path.resolve().relative_to(Path.cwd()), problem.line, problem.message))
    except ValueError:
        return str(problem)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["new"]:  # its own arguments (builder/new.py): what to write, and its name
        return new.main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("build", "check", "serve"))
    parser.add_argument("--lessons", type=Path, default=Paths.lessons, help="lessons folder")
    parser.add_argument("--out", type=Path, default=Paths.out, help="output folder (build, serve)")
    parser.add_argument("--port", type=int, default=8000, help="port (serve)")
    parser.add_argument("--dev", action="store_true", help="pages reload themselves after a rebuild (serve sets it)")
    parser.add_argument("--stdlib", action="store_true",
                        help="check: also list every standard-library module the site's Python imports, and why")
    parser.add_argument("--frozen", choices=("write", "read", "none", "seeds"), default="write",
                        help="lessons/frozen.json and site/stdlib/: take them and write them back when they are "
                             "renewed (build, serve), only take them (check always does), or compute every figure")
    parser.add_argument("--no-cache", action="store_true",
                        help="parse every lesson afresh, keeping nothing for the next build (builder/cache.py)")
    args = parser.parse_args(argv)
    paths = Paths(lessons=args.lessons.resolve(), out=args.out.resolve(), dev=args.dev or args.command == "serve",
                  frozen=args.frozen, cache=None if args.no_cache else CACHE)
    try:
        notes: list[str] = []  # what a build that succeeded says beside its last line
        if args.command == "build":
            print(f"built {paths.out} in {build(paths, notes):.2f} s")
            print(*notes, sep="\n", end="\n" if notes else "")
        elif args.command == "check":
            with tempfile.TemporaryDirectory() as scratch:
                build(Paths(lessons=paths.lessons, out=Path(scratch) / "_site",
                            frozen="none" if args.frozen == "none" else "read", cache=paths.cache), notes)
            stdlib = python_stdlib(replace(paths, frozen="read"), pack_sim(paths.sim)[1])
            if args.stdlib:
                print(f"the standard library sent, {stdlib.site_path} ({len(stdlib.data) / 1000:.0f} KB), "
                      "holds every module the site's Python imports, each with the step that imported it:")
                for line in stdlib.listing():
                    print(f"  {line}")
            print(f"check: no problems (the standard library sent: {len(stdlib.data) / 1000:.0f} KB; "
                  "--stdlib lists its modules)")
            print(*notes, sep="\n", end="\n" if notes else "")
        else:
            try:
                print(f"built {paths.out} in {build(paths, notes):.2f} s", flush=True)
                print(*notes, sep="\n", end="\n" if notes else "", flush=True)
            except BuildFailed as failed:
                report(failed)
                if not paths.out.exists():
                    return 2
            rebuild = Rebuilder(ROOT, ["build", "--dev", "--lessons", str(paths.lessons), "--out", str(paths.out)]
                                + ["--no-cache"] * args.no_cache, pycache=CACHE.parent / "pycache")
            sources = [paths.lessons, paths.templates, paths.static, paths.catalogs, paths.sim, ROOT / "builder"]
            serve(paths.out, args.port, sources, rebuild, announce=lambda line: print(line, flush=True),
                  ignore=frozenset({paths.lessons / frozen.FILE}))  # what the rebuild writes is no save
    except BuildFailed as failed:
        report(failed, args.command)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
