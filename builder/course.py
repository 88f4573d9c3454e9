"""The course: its plan (lessons/course.yml: the chapters in order, each with its lessons in reading order, written
or still to come), per language the titles of the lessons not yet written in it (lessons/<lang>/catalog.yml,
`upcoming`) and each chapter's title and summary (the same catalog, `chapters`), and per language the evolution map
every lesson shows (lessons/<lang>/evolution.yml, builder/evolution.py).

A chapter is a slug and its lessons; its words live in the catalogs, one home per string per language, like an
upcoming lesson's title. Its page is a folder beside the lessons' (foundations/, en/foundations/), so its slug may not
be a lesson's, nor a name the site's root already uses (TAKEN). The course reads in one order, the chapters' lessons
one chapter after another: "the previous lesson" and "the next lesson" cross a chapter's end.

Links to lessons go through the plan: `[text](lesson:SLUG)` links a lesson written in the page's language
and shows any other planned one as upcoming; a slug the plan does not know is an error (a typo, not a
future lesson). A written lesson's title is in its front matter, a planned one's in the catalog: one home.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from builder import urls, yamltext
from builder.catalogs import Catalog
from builder.evolution import EvolutionMap, load_maps
from builder.lessons import SLUG, SourceLesson
from builder.offline import PRECACHED
from builder.problems import Problem, did_you_mean
from sim.page.languages import LANGUAGES

PLAN_KEYS = ("chapter", "lessons")  # a chapter's keys in the plan; its words are in the catalogs
CHAPTER_WORDS = ("title", "summary")  # a chapter's words in each catalog, under chapters.SLUG
# A chapter's page is a folder beside the lessons' (urls.page): these names are taken at the site's root or in a
# language's folder. A lesson's slug cannot be a chapter's either (load_plan).
TAKEN = {urls.OFFLINE: "the offline page's address", **{lang: "a language's folder" for lang in LANGUAGES},
         **{folder.rstrip("/"): "a folder of the site's files" for folder in PRECACHED}}


@dataclass(frozen=True)
class Chapter:
    slug: str  # its page's folder, beside the lessons': foundations/, en/foundations/
    lessons: tuple[str, ...]  # its lessons' slugs, in reading order
    line: int  # of its `- chapter:` line in the plan


@dataclass(frozen=True)
class Plan:
    chapters: tuple[Chapter, ...]
    lines: dict[str, int]  # lesson slug -> its line in the plan

    @property
    def lessons(self) -> tuple[str, ...]:
        """Every lesson's slug in reading order: the chapters' lessons one chapter after another."""
        return tuple(slug for chapter in self.chapters for slug in chapter.lessons)


@dataclass(frozen=True)
class Course:
    plan: tuple[str, ...]  # slugs in reading order, every chapter's in turn
    written: Mapping[tuple[str, str], SourceLesson]  # (lang, slug) -> its lesson
    upcoming: Mapping[tuple[str, str], str]  # (lang, slug) -> title of a lesson not written in lang
    evolution: Mapping[str, EvolutionMap | None] = field(default_factory=dict)  # lang -> its map (None: broken)
    chapters: tuple[Chapter, ...] = ()  # in reading order
    # (lang, chapter slug) -> {"title": …, "summary": …}, from lessons/<lang>/catalog.yml (chapters)
    chapter_words: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)

    def neighbours(self, slug: str) -> tuple[str | None, str | None]:
        """The lessons before and after `slug` in the plan (None at either end): what "the previous lesson" and
        "the next lesson" mean, in every language, across a chapter's end as within a chapter."""
        at = self.plan.index(slug)
        return (self.plan[at - 1] if at > 0 else None), (self.plan[at + 1] if at + 1 < len(self.plan) else None)

    def title(self, lang: str, slug: str) -> str | None:
        """A lesson's title in `lang`: its front matter's if it is written there, else the catalog's upcoming one."""
        written = self.written.get((lang, slug))
        return written.title if written is not None else self.upcoming.get((lang, slug))

    def knows(self, slug: str) -> bool:
        return slug in self.plan

    def is_written(self, lang: str, slug: str) -> bool:
        return (lang, slug) in self.written

    def lessons(self, lang: str) -> list[SourceLesson]:
        """The lessons written in `lang`, in plan order."""
        return [self.written[(lang, s)] for s in self.plan if (lang, s) in self.written]

    def plan_in(self, lang: str) -> list[tuple[str, SourceLesson | None, str]]:
        """(slug, lesson or None, title) of every planned lesson in plan order: the course map of `lang`'s home
        page, each lesson written in that language or still to come there."""
        return [(s, self.written.get((lang, s)), self.written[(lang, s)].title if (lang, s) in self.written
                 else self.upcoming.get((lang, s), s)) for s in self.plan]

    def chapter_of(self, slug: str) -> Chapter | None:
        """The chapter a planned lesson belongs to."""
        return next((chapter for chapter in self.chapters if slug in chapter.lessons), None)

    def chapter_word(self, lang: str, chapter: str, word: str) -> str:
        """A chapter's title or summary in `lang` (its slug where the catalog lacks it: a problem the build
        reports)."""
        return self.chapter_words.get((lang, chapter), {}).get(word, chapter)

    def languages(self) -> list[str]:
        """The languages with at least one lesson: each has its pages."""
        return [lang for lang in LANGUAGES if any(written == lang for written, _ in self.written)]


SHAPE = ("the course plan is a list of chapters, each '- chapter: SLUG' with its lessons' slugs in order under "
         "'lessons:'")


def load_plan(path: Path) -> tuple[Plan, list[Problem]]:
    """The plan's chapters (each with its lessons in order), the line of each lesson, and its problems
    (file:line)."""
    empty = Plan((), {})
    if not path.is_file():
        return empty, [Problem(path, 1, "the course plan is missing: list the chapters here, each with its lessons' "
                                        "slugs in order")]
    try:
        root = yamltext.compose(path.read_text(encoding="utf-8-sig"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        mark = getattr(e, "problem_mark", None)
        return empty, [Problem(path, 1 + (mark.line if mark else 0), f"not valid YAML: {getattr(e, 'problem', e)}")]
    if not isinstance(root, yaml.SequenceNode) or not root.value:
        return empty, [Problem(path, 1 if root is None else _line(root), SHAPE)]
    chapters, lines, chapter_lines, problems = [], {}, {}, []
    for node in root.value:
        if not isinstance(node, yaml.MappingNode):
            problems.append(Problem(path, _line(node), f"{SHAPE} (this entry is not a chapter)"))
            continue
        fields = {key.value: (key, value) for key, value in node.value}
        for name, (key, _) in fields.items():
            if name not in PLAN_KEYS:
                where = (f": a chapter's {name} is in each language's catalog, lessons/<lang>/catalog.yml, under "
                         "chapters" if name in CHAPTER_WORDS else "")
                problems.append(Problem(path, _line(key), f"{name!r} is not a key of a chapter (chapter, lessons)"
                                                          f"{where or did_you_mean(name, PLAN_KEYS)}"))
        slug_node = fields.get("chapter", (None, None))[1]
        slug = slug_node.value if isinstance(slug_node, yaml.ScalarNode) else None
        if not (isinstance(slug, str) and SLUG.match(slug)):
            problems.append(Problem(path, _line(slug_node or node), "a chapter's 'chapter:' is its slug, the address "
                                                                    "of its page: lowercase letters, digits and "
                                                                    "hyphens"))
            continue
        if slug in chapter_lines:
            problems.append(Problem(path, _line(slug_node), f"chapter {slug!r} is listed twice (line "
                                                            f"{chapter_lines[slug]})"))
        chapter_lines.setdefault(slug, _line(node))
        if slug in TAKEN:
            problems.append(Problem(path, _line(slug_node), f"chapter {slug!r} would take {TAKEN[slug]} "
                                                            f"({slug}/): give the chapter another slug"))
        listed = fields.get("lessons", (None, None))[1]
        if not isinstance(listed, yaml.SequenceNode) or not listed.value:
            problems.append(Problem(path, _line(listed or node), f"chapter {slug!r} needs 'lessons:', its lessons' "
                                                                 "slugs in reading order, one '- slug' per line"))
            continue
        mine = []
        for entry in listed.value:
            lesson = entry.value if isinstance(entry, yaml.ScalarNode) else None
            if not (isinstance(lesson, str) and SLUG.match(lesson)):
                problems.append(Problem(path, _line(entry), "each of a chapter's lessons is a slug: lowercase "
                                                            "letters, digits and hyphens"))
            elif lesson in lines:
                problems.append(Problem(path, _line(entry), f"{lesson!r} is listed twice (line {lines[lesson]})"))
            else:
                mine.append(lesson)
                lines[lesson] = _line(entry)
        chapters.append(Chapter(slug, tuple(mine), _line(node)))
    for chapter in chapters:  # a chapter's page and a lesson's would be one folder
        if chapter.slug in lines:
            problems.append(Problem(path, chapter.line, f"chapter {chapter.slug!r} has the slug of a lesson (line "
                                                        f"{lines[chapter.slug]}), and both would be at "
                                                        f"{chapter.slug}/: give the chapter another slug"))
    return Plan(tuple(chapters), lines), problems


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def make_course(plan: Plan, plan_path: Path, lessons: list[SourceLesson],
                catalogs: dict[str, Catalog]) -> tuple[Course, list[Problem]]:
    """The course, checking that every lesson is planned, every planned lesson has one title per language, and every
    chapter a title and a summary in each language that has pages."""
    problems = []
    written = {}
    slugs = plan.lessons
    for lesson in lessons:
        if lesson.slug not in slugs:
            problems.append(Problem(lesson.path, 1, f"lesson {lesson.slug!r} is not in {plan_path.name}: "
                                                    "add its slug to a chapter of the course plan"))
        written[(lesson.lang, lesson.slug)] = lesson
    upcoming = {}
    for lang, catalog in catalogs.items():
        titles = catalog.section("upcoming")
        for slug in slugs:
            line = catalog.lines.get(f"upcoming.{slug}")
            if (lang, slug) in written:
                if line is not None:
                    problems.append(Problem(catalog.path, line, f"{slug!r} is written in {lang} "
                                            f"({written[(lang, slug)].path.name}), whose front matter holds its "
                                            "title: remove it from upcoming"))
            elif slug in titles:
                upcoming[(lang, slug)] = titles[slug]
            elif not (catalog.path.parent / f"{slug}.md").exists():  # else a lesson that failed to load
                problems.append(Problem(catalog.path, catalog.lines.get("upcoming", 1),
                                        f"planned lesson {slug!r} has no {lang} title: add it under 'upcoming:' "
                                        f"in lessons/{lang}/catalog.yml"))
        for slug in titles:
            if slug not in slugs:
                problems.append(Problem(catalog.path, catalog.lines[f"upcoming.{slug}"],
                                        f"{slug!r} is not in {plan_path.name}" + did_you_mean(slug, slugs)))
    words, found = chapter_words(plan, plan_path, catalogs, {lesson.lang for lesson in lessons})
    maps, more = load_maps(plan_path.parent, catalogs, slugs)
    return Course(slugs, written, upcoming, maps, plan.chapters, words), problems + found + more


def chapter_words(plan: Plan, plan_path: Path, catalogs: dict[str, Catalog],
                  with_pages: set[str]) -> tuple[dict[tuple[str, str], dict[str, str]], list[Problem]]:
    """Each chapter's title and summary per language, from the catalogs' `chapters:` sections (chapters.SLUG.title,
    chapters.SLUG.summary), and their problems: a chapter the plan lacks, a word that is not a chapter's, and a
    chapter without its title or summary in a language that has pages (its home page and the chapter's page show
    both)."""
    known = [chapter.slug for chapter in plan.chapters]
    words: dict[tuple[str, str], dict[str, str]] = {}
    problems = []
    for lang, catalog in catalogs.items():
        where, unknown = f"lessons/{lang}/catalog.yml", set()
        for key, text in catalog.section("chapters").items():
            line = catalog.lines[f"chapters.{key}"]
            chapter, _, word = key.partition(".")
            if chapter not in known:
                if chapter not in unknown:  # once, not once per word
                    problems.append(Problem(catalog.path, line, f"chapter {chapter!r} is not in {plan_path.name}"
                                                                + did_you_mean(chapter, known)))
                unknown.add(chapter)
            elif not word:
                problems.append(Problem(catalog.path, line, f"chapters.{chapter} holds the chapter's words: "
                                                            "title: and summary: under it"))
            elif word not in CHAPTER_WORDS:
                problems.append(Problem(catalog.path, line, f"{word!r} is not a chapter's word (title, summary)"
                                                            + did_you_mean(word, CHAPTER_WORDS)))
            elif not text.strip():
                problems.append(Problem(catalog.path, line, f"chapters.{chapter}.{word} is empty"))
            else:
                words.setdefault((lang, chapter), {})[word] = text.strip()
        if lang not in with_pages:
            continue
        for chapter in known:
            for word in CHAPTER_WORDS:
                if word not in words.get((lang, chapter), {}) and f"chapters.{chapter}.{word}" not in catalog.lines:
                    line = catalog.lines.get(f"chapters.{chapter}", catalog.lines.get("chapters", 1))
                    problems.append(Problem(catalog.path, line, f"chapter {chapter!r} has no {lang} {word}: add "
                                                                f"chapters.{chapter}.{word} to {where}"))
    return words, problems
