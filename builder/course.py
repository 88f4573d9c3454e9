"""The course: its plan (lessons/course.yml, every lesson in reading order, written or still to come),
per language, the titles of the lessons not yet written in it (lessons/<lang>/catalog.yml, `upcoming`), and per
language the evolution map every lesson shows (lessons/<lang>/evolution.yml, builder/evolution.py).

Links to lessons go through the plan: `[text](lesson:SLUG)` links a lesson written in the page's language
and shows any other planned one as upcoming; a slug the plan does not know is an error (a typo, not a
future lesson). A written lesson's title is in its front matter, a planned one's in the catalog: one home.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from builder.catalogs import Catalog
from builder.evolution import EvolutionMap, load_maps
from builder.lessons import SLUG, SourceLesson
from builder.problems import Problem
from sim.languages import LANGUAGES


@dataclass(frozen=True)
class Course:
    plan: tuple[str, ...]  # slugs in reading order
    written: Mapping[tuple[str, str], SourceLesson]  # (lang, slug) -> its lesson
    upcoming: Mapping[tuple[str, str], str]  # (lang, slug) -> title of a lesson not written in lang
    evolution: Mapping[str, EvolutionMap | None] = field(default_factory=dict)  # lang -> its map (None: broken)

    def neighbours(self, slug: str) -> tuple[str | None, str | None]:
        """The lessons before and after `slug` in the plan (None at either end): what "the previous lesson" and
        "the next lesson" mean, in every language."""
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

    def languages(self) -> list[str]:
        """The languages with at least one lesson: each has its pages."""
        return [lang for lang in LANGUAGES if any(written == lang for written, _ in self.written)]


def load_plan(path: Path) -> tuple[tuple[str, ...], dict[str, int], list[Problem]]:
    """The plan's slugs, the line of each, and its problems (file:line)."""
    if not path.is_file():
        return (), {}, [Problem(path, 1, "the course plan is missing: list every lesson's slug here, in order")]
    try:
        root = yaml.compose(path.read_text(encoding="utf-8-sig"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        mark = getattr(e, "problem_mark", None)
        return (), {}, [Problem(path, 1 + (mark.line if mark else 0), f"not valid YAML: {getattr(e, 'problem', e)}")]
    if not isinstance(root, yaml.SequenceNode):
        return (), {}, [Problem(path, 1, "the course plan is a list of lesson slugs, one '- slug' per line")]
    plan, lines, problems = [], {}, []
    for node in root.value:
        line = node.start_mark.line + 1
        slug = node.value if isinstance(node, yaml.ScalarNode) else None
        if not (isinstance(slug, str) and SLUG.match(slug)):
            problems.append(Problem(path, line, "each entry is a lesson slug: lowercase letters, digits and hyphens"))
        elif slug in lines:
            problems.append(Problem(path, line, f"{slug!r} is listed twice (line {lines[slug]})"))
        else:
            plan.append(slug)
            lines[slug] = line
    return tuple(plan), lines, problems


def make_course(plan: tuple[str, ...], plan_path: Path, lessons: list[SourceLesson],
                catalogs: dict[str, Catalog]) -> tuple[Course, list[Problem]]:
    """The course, checking that every lesson is planned and every planned lesson has one title per language."""
    problems = []
    written = {}
    for lesson in lessons:
        if lesson.slug not in plan:
            problems.append(Problem(lesson.path, 1, f"lesson {lesson.slug!r} is not in {plan_path.name}: "
                                                    "add its slug to the course plan"))
        written[(lesson.lang, lesson.slug)] = lesson
    upcoming = {}
    for lang, catalog in catalogs.items():
        titles = catalog.section("upcoming")
        for slug in plan:
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
            if slug not in plan:
                problems.append(Problem(catalog.path, catalog.lines[f"upcoming.{slug}"],
                                        f"{slug!r} is not in {plan_path.name}"))
    maps, found = load_maps(plan_path.parent, catalogs, plan)
    return Course(plan, written, upcoming, maps), problems + found
