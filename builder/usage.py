"""What each language's pages use that has words of its own: widgets (their TEXT), questions (their sentences in
sim/questions/<lesson>.py) and glossary terms (lessons/<lang>/catalog.yml). An author may write a lesson in one language
only: its widget's, question's and terms' words are then required in that language, and the other languages are
told what a translation will need (untranslated_note), not refused.

The lessons are scanned before anything is checked or parsed, because the checks that block every page
(builder/catalogs.py check_text_blocks, builder/widgets.py check_widgets) ask which languages need which words.
The scan reads the directives as the lesson parser does (the same Markdown rules, without inline parsing, which is
most of a parse's time), so a `::: widget` shown inside a code block counts for nothing, as it does on the page.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import yaml

from builder import yamltext
from builder.cache import Cache
from builder.lessons import SourceLesson
from sim.page.languages import LANGUAGES

WIDGET, QUESTION, TERM = "widget", "question", "term"
WORDS = "words"  # a sim/ module's words that every widget may use (the kit's, a running example)
# The widget setting that names a question of sim/questions/ (`::: widget predict` with `question: KEY`).
QUESTION_SETTING = "question"
# Directives whose body is not Markdown, so holds no directive of its own: a widget's settings, a formula's LaTeX.
OPAQUE_BODIES = ("widget", "formula")


@dataclass(frozen=True)
class Use:
    """One use of something with words of its own, on one page."""

    lesson: SourceLesson
    line: int

    def __str__(self) -> str:
        return f"{self.lesson.lang}/{self.lesson.path.name}:{self.line}"


@dataclass(frozen=True)
class Usage:
    """Every use, by (kind, name) and language, in page order."""

    uses: dict[tuple[str, str], dict[str, list[Use]]] = field(default_factory=dict)

    def languages(self, kind: str, name: str) -> set[str]:
        """The languages whose pages use it: those that need its words."""
        return set(self.uses.get((kind, name), {}))

    def first(self, kind: str, name: str, lang: str) -> Use | None:
        """Its first use on a page in `lang` (where a problem about its missing words says it is needed)."""
        found = self.uses.get((kind, name), {}).get(lang)
        return found[0] if found else None

    def widget_languages(self) -> set[str]:
        """The languages whose pages use any widget: those that need the words all widgets share (sim/kit)."""
        return {lang for (kind, _), by_lang in self.uses.items() if kind == WIDGET for lang in by_lang}

    def first_widget(self, lang: str) -> tuple[str, Use] | None:
        """The first widget a page in `lang` uses, with its use."""
        found = [(uses[0].lesson.path, uses[0].line, name, uses[0]) for (kind, name), by_lang in self.uses.items()
                 if kind == WIDGET for uses in (by_lang.get(lang),) if uses]
        return min(found, key=lambda f: (str(f[0]), f[1]))[2:] if found else None

    def lessons(self, kind: str, name: str) -> set[str]:
        """The slugs of the lessons that use it, in any language."""
        return {use.lesson.slug for uses in self.uses.get((kind, name), {}).values() for use in uses}


def scan(lessons: Iterable[SourceLesson], kept: Cache | None = None) -> Usage:
    """Every widget, question and term each lesson uses; each lesson's scan taken from `kept` (builder/cache.py, its
    inputs the builder's code) when that lesson was scanned before, as `serve`'s rebuilds in fresh processes ask."""
    uses: dict[tuple[str, str], dict[str, list[Use]]] = defaultdict(lambda: defaultdict(list))
    for lesson in lessons:
        found = kept.get(f"usage {lesson.path}", repr(lesson)) if kept is not None else None
        if found is None:
            found = _scan_lesson(lesson)
            if kept is not None:
                kept.put(f"usage {lesson.path}", repr(lesson), found)
        for kind, name, line in found:
            uses[(kind, name)][lesson.lang].append(Use(lesson, line))
    return Usage({key: dict(by_lang) for key, by_lang in uses.items()})


@functools.lru_cache(maxsize=1024)
def _scan_lesson(lesson: SourceLesson) -> tuple[tuple[str, str, int], ...]:
    """(kind, name, line) of everything with words of its own that one lesson uses; remembered by the lesson, for a
    process that scans the same lessons again (the note after a build, a test's builds)."""
    from builder.directives.formula import TERM as TERM_SYNTAX  # here: see _block_parser

    md, found = _block_parser(), []

    def walk(text: str, first_line: int) -> None:
        for token in md.parse(text):
            if token.type != "directive" or token.map is None:
                continue
            line, args, body = first_line + token.map[0], token.meta["args"], token.meta["body"]
            if token.info == "widget" and args.split():
                found.append((WIDGET, args.split()[0], line))
                if (question := _setting(body, QUESTION_SETTING)) is not None:
                    found.append((QUESTION, question, line))
            elif token.info == "formula":
                found.extend((TERM, match.group(1), line + 1 + body[:match.start()].count("\n"))
                             for match in TERM_SYNTAX.finditer(body))
            if token.info not in OPAQUE_BODIES:
                walk(body, line + 1)

    walk(lesson.body, lesson.body_line)
    return tuple(found)


@functools.cache
def _block_parser():
    """The lesson parser's Markdown rules without inline parsing: the directives, which are blocks, are all a scan
    needs. (Imported here, not above: the parser's modules import the catalogs, which import this module.)"""
    from builder.markdown import make_markdown

    return make_markdown().disable("inline")


def _setting(body: str, name: str) -> str | None:
    """A widget directive's setting `name`, if its body is a mapping that sets it to text (a body that is not is
    reported by the directive itself). YAML is read only where the setting may be: it is most of a scan's time."""
    if f"{name}:" not in body:
        return None
    try:
        settings = yamltext.safe_load(body) if body.strip() else None
    except yaml.YAMLError:
        return None
    value = settings.get(name) if isinstance(settings, dict) else None
    return value if isinstance(value, str) else None


# --- what a translation will need --------------------------------------------------------------------------

@dataclass(frozen=True)
class Missing:
    """Words that exist in some language but not in `lang`, where no page in `lang` needs them yet."""

    lang: str
    kind: str  # WIDGET, QUESTION, TERM or WORDS
    name: str


KIND_NAMES = {WIDGET: ("widget", "widgets"), QUESTION: ("question", "questions"), TERM: ("term", "terms"),
              WORDS: ("module", "modules")}


def untranslated_note(missing: Iterable[Missing], usage: Usage, lessons: Iterable[SourceLesson]) -> list[str]:
    """One line per language that lacks words another language has: how many of each kind and which, and the
    lessons not yet written in it that use them. Nothing when every language has every word."""
    by_lang: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for m in missing:
        by_lang[m.lang][m.kind].add(m.name)
    written = {(lesson.lang, lesson.slug) for lesson in lessons}
    lines = []
    for lang in (lang for lang in LANGUAGES if lang in by_lang):
        kinds = [(kind, sorted(by_lang[lang][kind])) for kind in KIND_NAMES if kind in by_lang[lang]]
        counts = [f"{len(names)} {KIND_NAMES[kind][len(names) > 1]}" for kind, names in kinds]
        which = "; ".join(f"{KIND_NAMES[kind][len(names) > 1]} {', '.join(names)}" for kind, names in kinds)
        slugs = sorted({slug for kind, names in kinds if kind != WORDS for name in names
                        for slug in usage.lessons(kind, name) if (lang, slug) not in written})
        needed = f", needed when these lessons are translated: {', '.join(slugs)}" if slugs else ""
        lines.append(f"{lang}: words missing for {_and(counts)} ({which}){needed}")
    return lines


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
