"""Full-text search: the box in every page's header finds lessons in the page's own language (Pagefind's index,
built with the site), is worked from the keyboard, asks nothing of other origins and still finds the right pages
when the site is served from a project sub-path (GitHub Pages' /<repo>/). Chinese terms find every page that holds
them, however the indexer and the browser cut the text into words."""

import re

import pytest
import yaml
from playwright.sync_api import expect

import build
from builder.serve import Server
from tests.browser.conftest import guard
from tests.builder.test_search import fragments

WORDS = {lang: yaml.safe_load((build.Paths.catalogs / f"{lang}.yml").read_text(encoding="utf-8"))["search"]
         for lang in ("zh", "en")}
SUB_PATH = "inferlab"


def counted(lang: str) -> re.Pattern:
    """The status line that reports a number of results, as the catalog words it."""
    many = re.escape(WORDS[lang]["many"]).replace(re.escape("{count}"), r"\d+")
    return re.compile(f"^(?:{many}|{re.escape(WORDS[lang]['one'])})$")


def search(page, query: str):
    """Type a query into the header's box; returns the results list once the status reports a count."""
    box = page.locator("#site-search-input")
    box.fill(query)
    lang = page.locator("html").get_attribute("lang")
    expect(page.locator("#site-search-status")).to_have_text(counted(lang), timeout=15_000)
    return page.locator("#site-search-results")


def result_urls(results) -> list[str]:
    return results.locator("li > a").evaluate_all("links => links.map(a => a.getAttribute('href'))")


def test_a_chinese_page_searches_the_chinese_lessons(site_page, server):
    requests = []
    site_page.on("request", lambda r: requests.append(r.url))
    site_page.goto(server.url(""))
    expect(site_page.locator(".site-search[data-ready]")).to_be_visible()
    assert not [url for url in requests if "/pagefind/" in url], "the index loads on first use, not with the page"
    results = search(site_page, "屋顶线")
    urls = result_urls(results)
    assert "/prefill-decode/" in urls
    assert not [url for url in urls if url.startswith("/en/")], f"an English page in Chinese results: {urls}"
    # Pagefind chose the index by <html lang>: only the Chinese index's files were fetched.
    parts = [url.split("/pagefind/")[1] for url in requests if re.search(r"/pagefind/(index|fragment)/", url)]
    assert parts and all(re.match(r"(index|fragment)/zh_", part) for part in parts), parts
    first = results.locator("li").first
    expect(first.locator("a")).not_to_be_empty()
    # The excerpt is text with the matches marked, and nothing else: no markup from the index reaches the page.
    expect(results.locator("mark").first).to_be_visible()
    assert results.locator(".site-search-excerpt *").evaluate_all("els => els.map(e => e.tagName)") == \
        ["MARK"] * results.locator(".site-search-excerpt mark").count()
    assert "\u200b" not in results.inner_text(), "the indexer's word separators are not shown"


# Chinese has no spaces: Pagefind cuts the pages into words when it indexes them, and the browser cuts the query
# (Intl.Segmenter) when the student searches. Where the two cut differently, a term on eight pages can find one
# (Pagefind issue #1237, in 1.5.x). So each term's results are counted against the pages that hold it.
CHINESE_TERMS = {
    "模型": "a word on every Chinese lesson",
    "显存": "indexed as two single characters, searched as one word",
    "带宽": "indexed as two single characters, searched as one word",
    "注意": "a word that also stands inside a longer one (注意力)",
}


def premise(term: str, words: dict[str, list[str]], every: list[str]) -> bool:
    """What CHINESE_TERMS says of the term holds in this build's index (words: URL -> the words of each page
    that holds the term)."""
    if term == "模型":
        return sorted(words) == every
    if term == "注意":
        return any(term not in ws and "注意力" in ws for ws in words.values())
    return all(term not in ws and term[0] in ws and term[1] in ws for ws in words.values())


def indexed_text(built_site) -> dict[str, str]:
    """URL -> the text Pagefind indexed for each Chinese page, its word separators taken out."""
    return {page["url"]: page["content"].replace("\u200b", "") for page in fragments(built_site)
            if not page["url"].startswith("/en/")}


def segments(built_site, url: str) -> list[str]:
    """The words Pagefind cut a page's text into (its index marks each cut with a zero-width space)."""
    page = next(page for page in fragments(built_site) if page["url"] == url)
    return [w for w in re.split(r"[\u200b\s\W]+", page["content"]) if w]


@pytest.mark.parametrize("term", CHINESE_TERMS, ids=CHINESE_TERMS.values())
def test_a_chinese_term_finds_every_lesson_that_holds_it(site_page, server, built_site, term):
    pages = indexed_text(built_site)
    holding = sorted(url for url, text in pages.items() if term in text)
    assert premise(term, {url: segments(built_site, url) for url in holding}, sorted(pages)), CHINESE_TERMS[term]
    site_page.goto(server.url(""))
    results = search(site_page, term)
    expect(site_page.locator("#site-search-status")).to_have_text(
        WORDS["zh"]["one"] if len(holding) == 1 else WORDS["zh"]["many"].format(count=len(holding)))
    assert sorted(result_urls(results)) == holding


def test_an_english_page_searches_the_english_lessons(site_page, server, built_site):
    requests = []
    site_page.on("request", lambda r: requests.append(r.url))
    site_page.goto(server.url("en/"))
    results = search(site_page, "roofline")
    urls = result_urls(results)
    assert "/en/prefill-decode/" in urls
    assert all(url.startswith("/en/") for url in urls), urls
    parts = [url.split("/pagefind/")[1] for url in requests if re.search(r"/pagefind/(index|fragment)/", url)]
    assert parts and all(re.match(r"(index|fragment)/en_", part) for part in parts), parts
    # Pagefind matches a word of the index that a query word starts with: "qqqzzzxxy" found speculative-decoding's
    # single-letter "q" (and "zvxjkqw" tensor-parallel's formula "Z"), so the nonsense is one that starts with no
    # word of any English page.
    words = {w.lower() for page in fragments(built_site) if page["url"].startswith("/en/")
             for w in segments(built_site, page["url"])}
    nonsense = next(n for n in (c + "qzxvjkw" for c in "zjxvyuo") if not any(n.startswith(w) for w in words))
    site_page.locator("#site-search-input").fill(nonsense)
    expect(site_page.locator("#site-search-status")).to_have_text(WORDS["en"]["none"])
    expect(results.locator("li")).to_have_count(0)


def test_results_are_reached_and_left_by_keyboard(site_page, server):
    site_page.goto(server.url("en/"))
    site_page.keyboard.press("Tab")  # the skip link or the brand first: find the box by tabbing on
    box = site_page.locator("#site-search-input")
    for _ in range(10):
        if box.evaluate("el => el === document.activeElement"):
            break
        site_page.keyboard.press("Tab")
    expect(box).to_be_focused()
    site_page.keyboard.type("roofline")
    expect(site_page.locator("#site-search-status")).to_have_text(counted("en"), timeout=15_000)
    site_page.keyboard.press("Tab")
    expect(site_page.locator("#site-search-results li > a").first).to_be_focused()
    site_page.keyboard.press("ArrowUp")
    expect(box).to_be_focused()
    site_page.keyboard.press("ArrowDown")
    expect(site_page.locator("#site-search-results li > a").first).to_be_focused()
    site_page.keyboard.press("Escape")
    expect(box).to_be_focused()
    expect(box).to_have_value("")
    expect(site_page.locator(".site-search-panel")).to_be_hidden()
    # Typed again, the first result opens with Enter.
    site_page.keyboard.type("roofline")
    expect(site_page.locator("#site-search-status")).to_have_text(counted("en"), timeout=15_000)
    site_page.keyboard.press("ArrowDown")
    target = site_page.locator("#site-search-results li > a").first.get_attribute("href")
    site_page.keyboard.press("Enter")
    expect(site_page).to_have_url(re.compile(re.escape(target) + "$"))
    expect(site_page.locator("html")).to_have_attribute("lang", "en")


def test_a_lesson_page_searches_too(site_page, server):
    site_page.goto(server.url("en/inference-vs-training/"))
    assert "/en/prefill-decode/" in result_urls(search(site_page, "roofline"))


def test_the_results_fit_a_phone_screen(site_page, server):
    site_page.set_viewport_size({"width": 375, "height": 740})
    site_page.goto(server.url(""))
    results = search(site_page, "屋顶线")
    box = site_page.locator(".site-search-panel").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375, box
    assert site_page.evaluate("document.documentElement.scrollWidth") <= 375
    expect(results.locator("li").first).to_be_in_viewport()


@pytest.fixture(scope="module")
def sub_path_server(built_site, tmp_path_factory):
    """The built site served from /inferlab/, as GitHub Pages serves a project site."""
    parent = tmp_path_factory.mktemp("sub-path")
    (parent / SUB_PATH).symlink_to(built_site, target_is_directory=True)
    s = Server(parent)
    yield s
    s.close()


@pytest.fixture
def sub_path_page(page, sub_path_server, watch):
    """Like site_page, for the site under its sub-path (another origin), in a context of the test's own."""
    guard(page.context, sub_path_server.origin, lambda: watch)
    yield watch.page(page)
    watch.assert_clean()


@pytest.mark.own_context
@pytest.mark.parametrize(("start", "query", "lesson"), [("", "屋顶线", "prefill-decode/"),
                                                        ("en/", "roofline", "en/prefill-decode/")], ids=["zh", "en"])
def test_results_link_to_pages_under_a_sub_path(sub_path_page, sub_path_server, start, query, lesson):
    sub_path_page.goto(sub_path_server.url(f"{SUB_PATH}/{start}"))
    results = search(sub_path_page, query)
    urls = result_urls(results)
    assert f"/{SUB_PATH}/{lesson}" in urls
    assert all(url.startswith(f"/{SUB_PATH}/") for url in urls), urls
    results.locator(f'a[href="/{SUB_PATH}/{lesson}"]').click()
    expect(sub_path_page).to_have_url(sub_path_server.url(f"{SUB_PATH}/{lesson}"))
    expect(sub_path_page.locator("h1")).not_to_be_empty()


@pytest.mark.own_context
def test_an_index_that_cannot_load_says_so(page, server):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.context.route(re.compile(r"/pagefind/"), lambda r: r.abort())
    page.goto(server.url("en/"))
    page.locator("#site-search-input").fill("roofline")
    expect(page.locator("#site-search-status")).to_have_text(WORDS["en"]["failed"], timeout=15_000)
    expect(page.locator("#site-search-results li")).to_have_count(0)
    assert errors == [], "the failure is told to the reader, not thrown"


# A Chinese reader searches for a term by its Chinese name as often as by the English one the lessons keep:
# each lesson names its key terms both ways at their first use, so either finds it.
@pytest.mark.parametrize("query", ["预填充", "解码", "prefill"])
def test_a_term_finds_its_lesson_by_its_chinese_or_english_name(site_page, server, query):
    site_page.goto(server.url(""))
    assert "/prefill-decode/" in result_urls(search(site_page, query))


# A hyphenated term is one word in the index (min-p as minp); on a Chinese page the browser's segmenter would cut the
# query into min and p, which start words on every page, and the lesson that teaches min-p came fourth.
@pytest.mark.parametrize("start", ["", "en/"])
@pytest.mark.parametrize("query, lesson", [("min-p", "sampling/"), ("top-k", "sampling/")])
def test_a_hyphenated_term_finds_the_lesson_that_teaches_it_first(site_page, server, start, query, lesson):
    site_page.goto(server.url(start))
    assert result_urls(search(site_page, query))[0].endswith(f"/{start}{lesson}")
