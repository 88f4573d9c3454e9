"""How tall each part of a lesson will be, estimated at build time, so that the page's scrollbar is about right
before the browser has laid a part out.

A lesson's parts (<section class="lesson-part">, builder/markdown.py) are laid out only when they near the screen
(site.css: content-visibility), and until then each stands in at the height its style gives it. One height for
every part made the scrollbar lie: a lesson of 11,000 px stood 184,000 px tall until the reader pressed Tab. Here
each part gets its own stand-in, in two widths (`--part-h` on a wide screen, `--part-h-narrow` on a phone), from
what it shows: the lines its text and code take at the column's width, its headings, table rows, displayed
formulas, plots, widget controls and widgets. Text inside a closed <details>, a [hidden] element, a <script> or a
<template> takes no room until it is opened, and counts for nothing.

The weights are fitted to the lessons' real heights in Chromium, at 1,280 px and 375 px wide (COEFFICIENTS), and
tests/browser/test_lessons.py holds every page's estimate within 1.5× of its laid-out height at both widths.
"""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser

# Features of a part, counted by _Features; each estimate is a weighted sum of them (px per feature).
FEATURES = ("lines", "headings", "rows", "math", "plots", "controls", "widgets")
# Text per line of the lesson column, in characters wide (a CJK character is two): wide, narrow.
LINE_CHARS = {"wide": 88, "narrow": 40}
# px per feature, fitted by least squares (no weight below 0) to the 213 parts of the 16 lesson pages as Chromium lays
# them out with every part drawn (2026-12): each page's estimate came within 0.93-1.09 of its height at both widths.
COEFFICIENTS = {
    "wide": {"lines": 27.1, "headings": 85.2, "rows": 0, "math": 0, "plots": 82.7, "controls": 29.1, "widgets": 89.4},
    "narrow": {"lines": 32.9, "headings": 71.3, "rows": 45.9, "math": 101.3, "plots": 309.9, "controls": 33.1,
               "widgets": 0},
}
SKIPPED = {"script", "template", "style"}
BLOCKS = {"p", "li", "td", "th", "h1", "h2", "h3", "h4", "figcaption", "summary", "pre", "blockquote", "dt", "dd"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
WIDE_CHAR = re.compile(r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]")
OPEN = '<section class="lesson-part">'
PART = re.compile(re.escape(OPEN))


def with_heights(body: str) -> str:
    """The lesson body with each part's estimated heights as custom properties on its <section>."""
    starts = [m.start() for m in PART.finditer(body)]
    if not starts:
        return body
    pieces, last = [body[:starts[0]]], len(body)
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else last
        part = body[start:end]
        wide, narrow = estimates(part, ("wide", "narrow"))
        style = f"--part-h:{wide}px;--part-h-narrow:{narrow}px"
        pieces.append(part.replace(OPEN, f'<section class="lesson-part" style="{style}">', 1))
    return "".join(pieces)


def estimate(html: str, width: str) -> int:
    """A part's height in px at that width ("wide" or "narrow")."""
    return estimates(html, (width,))[0]


def estimates(html: str, widths: tuple[str, ...]) -> list[int]:
    """A part's height in px at each width, from one reading of it."""
    return [round(sum(COEFFICIENTS[width][name] * counts[name] for name in FEATURES))
            for width, counts in zip(widths, read(html, tuple(LINE_CHARS[width] for width in widths)), strict=True)]


def features(html: str, line_chars: int) -> dict[str, float]:
    """A part's features, its lines counted at `line_chars` characters a line."""
    return read(html, (line_chars,))[0]


def read(html: str, line_chars: tuple[int, ...]) -> list[dict[str, float]]:
    """A part's features at each line width: only its lines depend on the width."""
    parser = _Features(line_chars)
    parser.feed(html)
    parser.close()
    parser.end_block()
    return [{**parser.counts, "lines": lines} for lines in parser.lines]


class _Features(HTMLParser):
    def __init__(self, line_chars: tuple[int, ...]):
        super().__init__(convert_charrefs=True)
        self.line_chars = line_chars
        self.counts = dict.fromkeys(FEATURES, 0.0)  # "lines" apart: one count per width, in `lines`
        self.lines = [0.0] * len(line_chars)
        self.stack: list[str] = []
        self.hidden_at: int | None = None  # depth of the element whose content takes no room
        self.width = 0  # characters of the block being read, in half-widths
        self.in_pre = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in VOID:
            self.stack.append(tag)
        if self.hidden_at is not None:
            return
        if tag in SKIPPED or "hidden" in a or (tag == "details" and "open" not in a):
            if tag in VOID:
                return
            self.hidden_at = len(self.stack)
            if tag == "details":  # its summary still shows: one line
                self.add_lines(1)
            return
        if tag in BLOCKS:
            self.end_block()
        if tag in ("h2", "h3", "h4"):
            self.counts["headings"] += 1
        elif tag == "tr":
            self.counts["rows"] += 1
        elif tag == "pre":
            self.in_pre = True
        elif tag == "math" and a.get("display") == "block":
            self.counts["math"] += 1
        elif "data-figure" in a:
            self.counts["plots"] += 1
        elif tag in ("input", "select", "button") and a.get("type") != "hidden":
            self.counts["controls"] += 1
        elif "data-widget" in a:
            self.counts["widgets"] += 1

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack and self.stack[-1] == tag:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in VOID or not self.stack:
            return
        while self.stack:  # close what is left open inside it (the parser does not)
            top = self.stack.pop()
            if self.hidden_at is not None and len(self.stack) < self.hidden_at:
                self.hidden_at = None
            if top == tag:
                break
        if self.hidden_at is None and tag in BLOCKS:
            if tag == "pre":
                self.in_pre = False
            self.end_block()

    def handle_data(self, data):
        if self.hidden_at is not None or self._inside("svg"):
            return
        if self.in_pre:  # a line of code is a line
            self.add_lines(data.count("\n") + 1)
            return
        text = " ".join(data.split())
        if text:
            self.width += len(text) + len(WIDE_CHAR.findall(text)) + 1

    def add_lines(self, n: int) -> None:
        self.lines = [lines + n for lines in self.lines]

    def end_block(self):
        if self.width:
            self.lines = [lines + math.ceil(self.width / chars) for lines, chars in zip(self.lines, self.line_chars)]
            self.width = 0

    def _inside(self, tag: str) -> bool:
        return tag in self.stack
