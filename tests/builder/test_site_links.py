"""The built site's link check: every internal link, anchor and asset of every page resolves."""

import html.parser
from pathlib import Path
from urllib.parse import urldefrag, urlparse

import pytest


class PageParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.urls.append(value)
            if name == "id" and value:
                self.ids.add(value)


@pytest.fixture(scope="module")
def real_site(built_site) -> Path:
    return built_site  # the run's one build of the real site (tests/conftest.py)


def parse(path: Path) -> PageParser:
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_every_link_anchor_and_asset_resolves(real_site):
    pages = {path: parse(path) for path in real_site.rglob("*.html")}
    assert len(pages) >= 2
    checked = 0
    for page, parsed in pages.items():
        for url in parsed.urls:
            if url.startswith("data:"):
                continue
            if urlparse(url).scheme in ("http", "https", "mailto"):
                continue  # links out of the site are for the student to follow; nothing is fetched
            assert not url.startswith("/"), f"{page}: {url} is absolute; the site must work under /<repo>/"
            target_url, fragment = urldefrag(url)
            target = (page.parent / urlparse(target_url).path).resolve() if target_url else page
            if target.is_dir():
                target = target / "index.html"
            assert target.is_file(), f"{page.relative_to(real_site)}: {url} does not exist"
            if fragment:
                assert fragment in pages[target].ids, f"{page.relative_to(real_site)}: #{fragment} missing in {target}"
            checked += 1
    assert checked > 10
