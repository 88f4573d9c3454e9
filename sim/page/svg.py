"""A few SVG building blocks for widgets that draw their own figures.

Every attribute value and every text is escaped here, so a caller can never inject markup, whatever
string reaches it. Markup is returned as str; children are markup built by these same functions.
"""

from __future__ import annotations

import math
import re

from sim.page.markup import escape

SVG_NAMESPACE = "http://www.w3.org/2000/svg"


def number(x: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros: 12, 12.5, 12.34."""
    if type(x) is int:  # most attributes (heights, offsets, widths of text boxes): nothing to round
        return str(x)
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def attributes(attrs: dict) -> str:
    """ name="value" pairs, numbers formatted by number(), values escaped; None values left out."""
    parts = []
    for name, value in attrs.items():
        kind = type(value)  # type(), not isinstance: a bool is not a number here, and this runs on every move
        if kind is str:
            parts.append(f' {name}="{_escape(value)}"')
        elif kind is float or kind is int:
            parts.append(f' {name}="{number(value)}"')  # digits, a dot and a minus: nothing to escape
        elif value is not None:
            parts.append(f' {name}="{_escape(str(value))}"')
    return "".join(parts)


_SPECIAL = frozenset('&<>"\'')


def _escape(value: str) -> str:
    """escape() with quotes, skipped for the common value that holds nothing to escape (this runs for every
    attribute of every diagram on every slider move)."""
    return escape(value, quote=True) if not _SPECIAL.isdisjoint(value) else value


def element(name: str, attrs: dict, *children: str) -> str:
    """<name attrs>children</name>, or <name attrs/> without children."""
    if not children:
        return f"<{name}{attributes(attrs)}/>"
    return f"<{name}{attributes(attrs)}>{''.join(children)}</{name}>"


def text(content: str, attrs: dict) -> str:
    """A <text> element whose content is escaped."""
    return element("text", attrs, escape(content, quote=False))


def text_node(name: str, content: str, attrs: dict | None = None) -> str:
    """An element holding only escaped text, e.g. a <title> tooltip."""
    return element(name, attrs or {}, escape(content, quote=False))


def tspan(content: str, attrs: dict) -> str:
    """A <tspan> element whose content is escaped."""
    return element("tspan", attrs, escape(content, quote=False))


def wrap(text: str, width: float, measure) -> list[str]:
    """`text` in lines no wider than `width` by `measure(line)`, broken after spaces, or in Chinese text only after
    its punctuation (，：；), as evenly as that many lines allow; a word wider than `width` keeps a line of its own."""
    breaks = r"(?<=[，：；])" if re.search(r"[\u4e00-\u9fff]", text) else r"(?<= )"
    pieces = re.split(breaks, text)

    def fill(limit: float) -> list[str]:
        lines = [""]
        for piece in pieces:
            if lines[-1] and measure((lines[-1] + piece).rstrip()) > limit:
                lines.append("")
            lines[-1] += piece
        return [line.rstrip() for line in lines]

    lines = fill(width)
    if len(lines) > 1:  # the same number of lines, balanced: no word left alone on the last
        limit = measure(text) / len(lines)
        while limit < width:
            even = fill(limit)
            if len(even) == len(lines):
                return even
            limit += width / 40
    return lines


def text_width(text: str, font_px: float) -> float:
    """Rough rendered width: CJK characters are square, Latin ones a bit over half as wide."""
    return math.fsum(font_px if ord(c) > 0x2E7F else 0.6 * font_px for c in text)


def document(width: float, height: float, label: str, *children: str, css_class: str | None = None) -> str:
    """A complete, self-contained <svg> with a viewBox and an accessible name; no scripts, no links."""
    return element(
        "svg",
        {"xmlns": SVG_NAMESPACE, "class": css_class, "viewBox": f"0 0 {number(width)} {number(height)}",
         "width": width, "height": height, "role": "img", "aria-label": label},
        *children,
    )


def responsive(wide: str, narrow: str) -> str:
    """One diagram drawn twice: `wide` for desktop, `narrow` (about 300 units wide, for a 375 px phone). The
    stylesheet shows one of them by a container query on the frame (.scroll-x), so a view stays one string for
    every width and the page and CPython render the same markup."""
    # The search index reads the diagram's words once, from the wide drawing.
    return f'<div class="layout-wide">{wide}</div><div class="layout-narrow" data-pagefind-ignore="">{narrow}</div>'
