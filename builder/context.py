"""What a lesson's parse can see (the course, the glossary, the page chrome's words, the expression names)
and what it collects on the way (widgets, links, element ids, checks that need the whole page)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import jinja2

from builder import urls
from builder.course import Course
from builder.frozen import Frozen
from builder.terms import Term


@dataclass(frozen=True)
class WidgetUse:
    name: str
    id: str
    line: int
    outputs: frozenset[str]  # output names of its view
    controls: frozenset[str]
    flags: frozenset[str] = frozenset()  # flag names of its view ("answered" makes it a question)
    setting: str = ""  # the state it starts in, its language left out, as JSON (the same in every language)


@dataclass(frozen=True)
class LinkUse:
    line: int
    slug: str | None  # target lesson, None for this page
    fragment: str  # "" for the page itself


@dataclass
class LessonContext:
    """Per-lesson parse state handed to directives and Markdown rules."""

    lang: str
    slug: str
    templates: jinja2.Environment
    course: Course
    terms: dict[str, Term]
    ui: dict  # the page chrome's words in this language (site/i18n/<lang>.yml)
    names: dict  # for {sim}`EXPR`
    frozen: Frozen  # what the simulator gave an earlier build of the same code (builder/frozen.py)
    render_markdown: Callable[[str, int], str] = None  # (markdown, 1-based line of its first line) -> HTML
    widgets: list[WidgetUse] = field(default_factory=list)
    # ids of widgets whose directive failed (its own problem says why): nothing else is blamed for their absence
    failed_widgets: set[str] = field(default_factory=set)
    expressions: list[tuple[str, int]] = field(default_factory=list)  # every {sim} expression, with its line
    scripted: bool = False  # the page needs the client script (widgets, clickable formulas)
    links: list[LinkUse] = field(default_factory=list)
    ids: list[tuple[str, int]] = field(default_factory=list)  # every element id of the body, with its line
    sections: list[str] = field(default_factory=list)  # ids of its headings and widgets: the places a reader is at
    counts: dict[str, int] = field(default_factory=dict)  # numbered things so far ("table": 2), for unique labels
    # (line, check) pairs run once the whole page is parsed; check(ctx) returns a problem or None
    checks: list[tuple[int, Callable[[LessonContext], str | None]]] = field(default_factory=list)
    # Each call of a replayable directive (builder/directives REPLAYABLE): (name, args, body, line, its outcome, the
    # sim modules it reached); None records nothing.
    replays: list[tuple[str, str, str, int, str, tuple[str, ...]]] | None = None

    @property
    def page(self) -> str:
        return urls.page(self.lang, self.slug)

    def lesson_href(self, slug: str, fragment: str = "") -> str:
        """A relative link to a lesson in this page's language."""
        return urls.link(self.page, urls.page(self.lang, slug)) + (f"#{fragment}" if fragment else "")

    def widget(self, widget_id: str) -> WidgetUse | None:
        return next((w for w in self.widgets if w.id == widget_id), None)
