"""Where every page lives: the one place that turns a language and a lesson into a URL.

The default language's pages are at the site root (prefill-decode/), every other language's under its
code (en/prefill-decode/); each language has a home page (index.html, en/index.html). Every link in the
site is relative, so that it works from a project site's /<repo>/ path.
"""

from __future__ import annotations

import posixpath

from sim.page.languages import DEFAULT

OFFLINE = "offline"  # the slug of each language's offline page (offline/, en/offline/), never a lesson's


def page(lang: str, slug: str | None = None) -> str:
    """The site path of a page's folder: "" (default home), "en/", "prefill-decode/", "en/prefill-decode/"."""
    prefix = "" if lang == DEFAULT else f"{lang}/"
    return prefix + (f"{slug}/" if slug else "")


def page_file(lang: str, slug: str | None = None) -> str:
    """The file that holds a page: its folder's index.html."""
    return page(lang, slug) + "index.html"


def root(from_page: str) -> str:
    """The relative URL of the site root from a page folder ("" at the root, "../../" from en/x/)."""
    return "../" * from_page.count("/")


def link(from_page: str, to_page: str) -> str:
    """The shortest relative link from one page folder to another: "demo/", "../second/", "../../", "./"."""
    path = posixpath.relpath(to_page or ".", from_page or ".")
    return "./" if path == "." else f"{path}/"
