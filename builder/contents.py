"""A lesson's contents list: its sections (the <h2> headings of the rendered body), in order; and the section
each element of the body lies in (the heading a question is found under, for the home page's list of questions
to revisit)."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser


@dataclass(frozen=True)
class Section:
    id: str
    title: str  # the heading's text, as the reader sees it (formulas and values included)


def headings(body: str) -> tuple[list[Section], dict[str, Section]]:
    """From one reading of a lesson body: its sections, every <h2 id=…> with its text (headings without an id cannot
    be linked and are left out); and element id -> the section it lies in (the last <h2 id=…> before it), elements
    before the first heading and the headings themselves left out."""
    parser = _Headings()
    parser.feed(body)
    parser.close()
    return parser.found, parser.holding


class _Headings(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[Section] = []
        self.holding: dict[str, Section] = {}
        self._id: str | None = None
        self._text: list[str] = []
        self._depth = 0  # inside an <h2>: text counts; elements nested in it are walked through

    def handle_starttag(self, tag, attrs):
        if tag == "h2" and self._depth == 0:
            self._id, self._text, self._depth = dict(attrs).get("id"), [], 1
            return
        if self._depth:
            self._depth += 1
        element_id = dict(attrs).get("id")
        if element_id and self.found and not self._depth:
            self.holding.setdefault(element_id, self.found[-1])

    def handle_endtag(self, tag):
        if not self._depth:
            return
        self._depth -= 1
        if self._depth == 0 and self._id:
            self.found.append(Section(self._id, " ".join("".join(self._text).split())))

    def handle_data(self, data):
        if self._depth:
            self._text.append(data)
