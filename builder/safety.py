"""Markup a lesson must never carry: scripts, event-handler attributes and javascript: URLs, wherever they
come from (raw HTML, Markdown attributes, a link, or LaTeX such as \\href and \\text). The site's
Content-Security-Policy would block them anyway; refusing them at build time tells the author where.
"""

from __future__ import annotations

import html.parser
import re
from dataclasses import dataclass, field

URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "poster", "data", "srcset"}
SCRIPT_URL = re.compile(r"^javascript:", re.IGNORECASE)
# Browsers drop tabs, newlines and other control characters anywhere in a URL ("java\tscript:" runs).
URL_NOISE = re.compile(r"[\x00-\x20]")
# A javascript: URL written as Markdown that markdown-it refused to make a link, e.g. [x](javascript:…).
SCRIPT_URL_IN_TEXT = re.compile(r"javascript\s*:", re.IGNORECASE)
HANDLER_IN_ATTRIBUTES = re.compile(r"\{[^{}]*?(?<![\w-])(on[a-z]+)\s*=", re.IGNORECASE)
# What latex2mathml emits; anything else in its output came through verbatim from the LaTeX.
MATHML_ELEMENTS = {
    "math", "mrow", "mi", "mo", "mn", "ms", "mtext", "mspace", "msup", "msub", "msubsup", "mfrac", "msqrt",
    "mroot", "mstyle", "mtable", "mtr", "mtd", "mlabeledtr", "munder", "mover", "munderover", "mpadded",
    "mphantom", "menclose", "merror", "mmultiscripts", "mprescripts", "none", "semantics", "annotation",
}
NO_SCRIPT = "raw <script> is not allowed in a lesson (the page's Content-Security-Policy blocks it); " \
            "interactivity comes from widgets (sim/widgets/)"


def _no_handler(name: str) -> str:
    return f"event-handler attribute {name}= is not allowed in a lesson (the page's Content-Security-Policy " \
           "blocks inline scripts)"


def _no_script_url(where: str) -> str:
    return f"javascript: URL {where} is not allowed in a lesson (the page's Content-Security-Policy blocks it)"


@dataclass
class Scan:
    problems: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)


class _Scanner(html.parser.HTMLParser):
    def __init__(self, math: bool):
        super().__init__(convert_charrefs=True)
        self.math = math
        self.found = Scan()

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.found.problems.append(NO_SCRIPT)
        elif self.math and tag not in MATHML_ELEMENTS:
            self.found.problems.append(f"<{tag}> inside math: LaTeX (e.g. \\text{{…}}) must not contain HTML")
        self.found.problems.extend(attribute_problems(dict(attrs)))
        self.found.ids.extend(value for name, value in attrs if name == "id" and value)

    handle_startendtag = handle_starttag


def scan(markup: str, math: bool = False) -> Scan:
    """The problems of a piece of HTML (or of MathML, whose elements are checked too) and the ids it sets."""
    scanner = _Scanner(math)
    scanner.feed(markup)
    scanner.close()
    return scanner.found


def markup_problems(markup: str, math: bool = False) -> list[str]:
    return scan(markup, math).problems


def attribute_problems(attrs: dict) -> list[str]:
    """Event handlers and javascript: URLs among an element's attributes."""
    problems = []
    for name, value in attrs.items():
        name = str(name).lower()
        if name.startswith("on"):
            problems.append(_no_handler(name))
        elif name in URL_ATTRIBUTES and value is not None and SCRIPT_URL.match(URL_NOISE.sub("", str(value))):
            problems.append(_no_script_url(f"in {name}="))
    return problems


def text_problems(text: str) -> list[str]:
    return [_no_script_url("in a link")] if SCRIPT_URL_IN_TEXT.search(text) else []


def attribute_syntax_problems(source: str) -> list[str]:
    """Event handlers in Markdown attribute syntax, {onclick=…}: mdit-py-plugins drops them without a word,
    so the author would never learn why the attribute did nothing."""
    return [_no_handler(m.group(1).lower()) for m in HANDLER_IN_ATTRIBUTES.finditer(source)]
