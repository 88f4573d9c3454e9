"""Load lesson sources: lessons/<lang>/<slug>.md, front matter validated into a record, body kept with
the line number of its first line.

The file name is the lesson's slug (its URL); the course plan (lessons/course.yml) gives its place in the
course. The front matter holds what only the lesson knows: its title, summary and reading time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from builder import yamltext
from builder.problems import LessonError, Problem, did_you_mean
from sim.page.languages import DEFAULT, LANGUAGES

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LANGUAGE_FOLDER = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]+)?$")
FRONT_MATTER_FIELDS = {"title": str, "summary": str, "minutes": int}
MAX_MINUTES = 600
# Fields an author may carry over from other site generators, and where their information lives here.
MOVED_FIELDS = {
    "slug": "the file name is the slug: remove this line (rename the file to change the URL)",
    "order": "the course plan, lessons/course.yml, sets the order: remove this line",
}


@dataclass(frozen=True)
class SourceLesson:
    path: Path  # as given to the builder, for messages
    lang: str
    slug: str
    title: str
    summary: str
    minutes: int
    body: str
    body_line: int  # 1-based line number of the body's first line


def load_lessons(lessons_dir: Path) -> tuple[list[SourceLesson], list[Problem]]:
    """Every lessons/<lang>/*.md, in language order, plus the problems found on the way."""
    lessons, problems = [], []
    for folder in sorted(p for p in lessons_dir.iterdir() if p.is_dir()) if lessons_dir.is_dir() else ():
        if folder.name not in LANGUAGES and LANGUAGE_FOLDER.match(folder.name):
            problems.append(Problem(folder, 1, f"{folder.name!r} is not a site language "
                                               f"({', '.join(LANGUAGES)}): add its code to sim/page/languages.py"))
    for lang in LANGUAGES:
        for path in sorted((lessons_dir / lang).glob("*.md")):
            try:
                lessons.append(load_lesson(path, lang))
            except LessonError as e:
                problems.append(Problem(path, e.line, e.message))
    if not any((lessons_dir / DEFAULT).glob("*.md")):
        problems.append(Problem(lessons_dir / DEFAULT, 1, f"no lesson in the default language ({DEFAULT}): "
                                                          f"the site needs at least one lessons/{DEFAULT}/*.md"))
    return lessons, problems


def load_lesson(path: Path, lang: str) -> SourceLesson:
    """One lesson file; raises LessonError for text that is not UTF-8 or front matter that is wrong."""
    slug = path.stem
    if not SLUG.match(slug):
        raise LessonError(1, f"the file name is the lesson's slug (its URL): {path.name!r} must be lowercase "
                             "letters, digits and hyphens, e.g. kv-cache.md")
    try:
        # utf-8-sig: editors on Windows start a file with a byte-order mark, which is not part of the text.
        text = path.read_bytes().decode("utf-8-sig")
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
    return SourceLesson(path=path, lang=lang, slug=slug, body="".join(lines[end + 1:]), body_line=end + 2, **meta)


def _parse_front_matter(text: str) -> dict:
    try:
        root = yamltext.compose(text)
        meta = yamltext.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = 2 + mark.line if mark is not None else 2
        raise LessonError(line, f"front matter is not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(meta, dict) or not isinstance(root, yaml.MappingNode):
        raise LessonError(2, "front matter must be fields, one per line: 'title: …', 'summary: …', 'minutes: …'")
    field_line = {}
    for key, _ in root.value:
        line = 2 + key.start_mark.line
        if key.value in field_line:
            raise LessonError(line, f"'{key.value}' is set twice (lines {field_line[key.value]} and {line})")
        field_line[key.value] = line
    for name in meta:
        if name in MOVED_FIELDS:
            raise LessonError(field_line.get(name, 2), f"front matter field '{name}': {MOVED_FIELDS[name]}")
        if name not in FRONT_MATTER_FIELDS:
            raise LessonError(field_line.get(name, 2),
                              f"unknown front matter field {name!r}; known: {', '.join(FRONT_MATTER_FIELDS)}"
                              + did_you_mean(name, FRONT_MATTER_FIELDS))
    for name, kind in FRONT_MATTER_FIELDS.items():
        if name not in meta:
            raise LessonError(2, f"front matter needs '{name}' ({'text' if kind is str else 'a whole number'})")
        value, line = meta[name], field_line[name]
        if kind is str and not (isinstance(value, str) and value.strip()):
            raise LessonError(line, f"'{name}' must be text, got {value!r}"
                              + (" (quote it if it contains ': ')" if isinstance(value, dict) else ""))
        if kind is int and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_MINUTES):
            raise LessonError(line, f"'{name}' must be a whole number of minutes from 1 to {MAX_MINUTES}, "
                                    f"got {value!r}")
    return {name: meta[name].strip() if isinstance(meta[name], str) else meta[name] for name in FRONT_MATTER_FIELDS}
