"""The course plan (lessons/course.yml): every lesson in order, written or still to come.

Links to lessons go through the plan: `[text](lesson:SLUG)` links a written lesson and shows a planned
one as upcoming; a slug the plan does not know is an error (a typo, not a future lesson).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from builder.problems import Problem


@dataclass(frozen=True)
class PlannedLesson:
    slug: str
    title: str
    line: int


@dataclass(frozen=True)
class Course:
    planned: tuple[PlannedLesson, ...]
    written: frozenset[str]  # slugs that have a lesson file

    def knows(self, slug: str) -> bool:
        return any(p.slug == slug for p in self.planned)

    def is_written(self, slug: str) -> bool:
        return slug in self.written


def load_course(path: Path) -> tuple[tuple[PlannedLesson, ...], list[Problem]]:
    """The plan's entries, and its problems (file:line)."""
    if not path.is_file():
        return (), [Problem(path, 1, "the course plan is missing: list every lesson's slug and title here")]
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        mark = getattr(e, "problem_mark", None)
        return (), [Problem(path, 1 + (mark.line if mark else 0), f"not valid YAML: {getattr(e, 'problem', e)}")]
    lines = path.read_text(encoding="utf-8").splitlines()
    entry_lines = [i + 1 for i, raw in enumerate(lines) if raw.startswith("- ")]
    if not isinstance(data, list):
        return (), [Problem(path, 1, "the course plan is a list of {slug, title} entries")]
    planned, problems = [], []
    for i, entry in enumerate(data):
        line = entry_lines[i] if i < len(entry_lines) else 1
        if not (isinstance(entry, dict) and set(entry) == {"slug", "title"}
                and all(isinstance(v, str) and v for v in entry.values())):
            problems.append(Problem(path, line, "each entry needs exactly 'slug' and 'title' (text)"))
        elif any(p.slug == entry["slug"] for p in planned):
            problems.append(Problem(path, line, f"slug {entry['slug']!r} is listed twice"))
        else:
            planned.append(PlannedLesson(entry["slug"], entry["title"], line))
    return tuple(planned), problems
