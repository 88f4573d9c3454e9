"""Load lesson sources: front matter validated into a record, body kept with its first line number."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from builder.problems import LessonError, Problem

LANGUAGES = ("zh", "en")
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
FRONT_MATTER_FIELDS = {"title": str, "slug": str, "order": int, "summary": str, "minutes": int}


@dataclass(frozen=True)
class SourceLesson:
    path: Path  # as given to the builder, for messages
    lang: str
    title: str
    slug: str
    order: int
    summary: str
    minutes: int
    body: str
    body_line: int  # 1-based line number of the body's first line


def load_lessons(lessons_dir: Path) -> tuple[list[SourceLesson], list[Problem]]:
    """Every lessons/<lang>/*.md, sorted by language and order, plus the problems found on the way."""
    lessons, problems = [], []
    for lang in LANGUAGES:
        for path in sorted((lessons_dir / lang).glob("*.md")):
            try:
                lessons.append(load_lesson(path, lang))
            except LessonError as e:
                problems.append(Problem(path, e.line, e.message))
    seen: dict[tuple[str, str], SourceLesson] = {}
    for lesson in lessons:
        key = (lesson.lang, lesson.slug)
        if key in seen:
            problems.append(Problem(lesson.path, 2, f"slug {lesson.slug!r} is already used by {seen[key].path}"))
        else:
            seen[key] = lesson
    lessons.sort(key=lambda s: (LANGUAGES.index(s.lang), s.order, s.slug))
    return lessons, problems


def load_lesson(path: Path, lang: str) -> SourceLesson:
    """One lesson file; raises LessonError for text that is not UTF-8 or front matter that is wrong."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise LessonError(1, f"not UTF-8 text (byte {e.start}); save the lesson as UTF-8") from None
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise LessonError(1, "a lesson starts with front matter: a line '---', YAML fields, and another '---'")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise LessonError(1, "front matter is not closed by a line '---'") from None
    meta = _parse_front_matter("".join(lines[1:end]))
    return SourceLesson(path=path, lang=lang, body="".join(lines[end + 1:]), body_line=end + 2, **meta)


def _parse_front_matter(text: str) -> dict:
    try:
        meta = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = 2 + mark.line if mark is not None else 2
        raise LessonError(line, f"front matter is not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(meta, dict):
        raise LessonError(2, "front matter must be a mapping of field: value")
    field_line = {name: 2 + i for i, raw in enumerate(text.splitlines())
                  for name in meta if raw.startswith(f"{name}:")}
    for name, kind in FRONT_MATTER_FIELDS.items():
        if name not in meta:
            raise LessonError(2, f"front matter needs '{name}' ({kind.__name__})")
        value = meta[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise LessonError(field_line.get(name, 2), f"'{name}' must be {kind.__name__}, got {value!r}")
    for name in meta:
        if name not in FRONT_MATTER_FIELDS:
            raise LessonError(field_line.get(name, 2),
                              f"unknown front matter field {name!r}; known: {', '.join(FRONT_MATTER_FIELDS)}")
    if not SLUG.match(meta["slug"]):
        raise LessonError(field_line["slug"], f"slug {meta['slug']!r} must be lowercase letters, digits and hyphens")
    return {name: meta[name] for name in FRONT_MATTER_FIELDS}
