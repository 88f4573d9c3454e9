"""A lesson visited once opens again offline with working widgets; a rebuilt site is never served stale online."""

import re
import shutil

import pytest
import yaml
from playwright.sync_api import expect

import build
from tests.browser.conftest import (
    ALL_READY,
    READY_TIMEOUT_MS,
    cpython_view,
    eventually,
    some_lessons,
    wait_for_output,
)
from tests.browser.test_lessons import AXE, violations
from tests.browser.test_search import WORDS, result_urls, search

UI = {lang: yaml.safe_load((build.Paths.catalogs / f"{lang}.yml").read_text(encoding="utf-8")) for lang in ("zh", "en")}

# Each test starts from a browser that has never visited the site: what it tests is what a visit leaves behind.
pytestmark = pytest.mark.own_context

LESSON = "prefill-decode/"


def visit(page, url: str) -> None:
    """Open a page, wait until its widgets answer (a page without any: no Python boots) and it is kept for offline
    reading."""
    page.goto(url)
    widgets = page.locator("[data-widget]").count()
    if widgets:
        page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
    assert page.evaluate("window.inferlab.offline") is True
    if widgets:
        page.evaluate("window.inferlab.runtime.settled")


# What a failure to take over shows: the registration's workers and the caches there are.
SERVICE_WORKERS = """async () => {
  const registration = await navigator.serviceWorker.getRegistration();
  const worker = (w) => w && `${w.scriptURL.split("/").pop()} ${w.state}`;
  return {caches: await caches.keys(), installing: worker(registration?.installing),
          waiting: worker(registration?.waiting), active: worker(registration?.active),
          controller: worker(navigator.serviceWorker.controller)};
}"""


def caches_become(page, predicate: str, arg=None) -> None:
    """Wait until the caches satisfy `predicate`; if they never do, say where the service workers stand."""
    try:
        eventually(page, predicate, arg)
    except AssertionError:
        raise AssertionError(f"caches never satisfied {predicate}; {page.evaluate(SERVICE_WORKERS)}") from None


@pytest.fixture
def own_site(tmp_path, serve):
    """A site of this test's own, to rebuild while a browser has it open: (paths, server)."""
    lessons, static = some_lessons(tmp_path / "lessons", {LESSON.strip("/")}), tmp_path / "static"
    shutil.copytree(build.ROOT / "site" / "static", static)
    paths = build.Paths(out=tmp_path / "_site", lessons=lessons, static=static)
    build.build(paths)
    return paths, serve(paths.out)


def forget_kept(page, part: str) -> None:
    """Take out of the service worker's caches every file whose address holds `part`."""
    page.evaluate("""async (part) => {
      for (const name of await caches.keys()) {
        const cache = await caches.open(name);
        for (const request of await cache.keys()) if (request.url.includes(part)) await cache.delete(request);
      }
    }""", part)


# Whether every file the service worker keeps on use (the search index, plotly.js) is in its cache.
KEPT_ON_USE = """async () => {
  const root = new URL(document.documentElement.dataset.root || './', document.baseURI);
  const source = await (await fetch(new URL('sw.js', root))).text();
  const later = Object.keys(JSON.parse(source.match(/const BUILD = (\\{.*?\\});\\n/)[1]).later);
  const cache = await caches.open((await caches.keys())[0]);
  const found = await Promise.all(later.map(path => cache.match(new URL(path, root))));
  return {later: later.length, kept: later.filter((path, i) => found[i])};
}"""


@pytest.mark.parametrize("online", ["a-second-page", "a-search"])
def test_search_and_figures_work_offline_once_the_student_reads_on_or_searches(own_page, server, online):
    """Offline, a search never made online still finds its pages, and a figure never seen online is drawn."""
    visit(own_page, server.url(LESSON))
    if online == "a-second-page":
        visit(own_page, server.url("inference-vs-training/"))
    else:
        assert "/prefill-decode/" in result_urls(search(own_page, "屋顶线"))
    caches_become(own_page, f"async () => {{ const k = await ({KEPT_ON_USE})(); return k.kept.length === k.later; }}")
    own_page.context.set_offline(True)
    own_page.goto(server.url(LESSON))
    assert "/inference-vs-training/" in result_urls(search(own_page, "训练"))
    own_page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
    own_page.locator("#roofline").scroll_into_view_if_needed()
    expect(own_page.locator("#roofline .js-plotly-plot")).to_be_attached()
    own_page.goto(server.url("en/" + LESSON))  # not visited: the offline page, whose search box works too
    assert "/en/prefill-decode/" in result_urls(search(own_page, "roofline"))


def test_a_first_visit_keeps_its_page_for_offline_reading_and_the_rest_says_what_needs_a_connection(own_page,
                                                                                                      server):
    """What one first visit of a lesson leaves for reading offline, each part after the same cold visit (a cold
    boot costs seconds of CPU, and every part starts from what that visit kept):
    - the search index and plotly.js wait until they are used;
    - offline, the lesson opens from a scenario link with working widgets, and again on a reload;
    - offline, an unvisited lesson, or the page in the other language, is the offline page of its address's
      language, listing the page kept, with its own styles, a working skip link and search box, passing axe in
      either theme and fitting a phone; from its list the kept page opens;
    - offline, a figure whose plotly.js was never fetched says so, with what it shows, and a search whose index was
      never fetched says it needs a connection (own_page fails the test on a console error: the page asked the
      worker first, and imported nothing)."""
    visit(own_page, server.url(LESSON))
    title = own_page.locator("h1").inner_text()
    kept = own_page.evaluate(KEPT_ON_USE)  # on the page itself: another page would be a student reading on
    assert kept["later"] > 10 and not [path for path in kept["kept"] if path.startswith("pagefind/")], kept
    own_page.context.set_offline(True)

    # A scenario link to the page: the page, its styles, scripts, Python and the simulator all answer.
    own_page.goto(server.url(LESSON) + "?roofline.T=1024")
    own_page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
    roof = own_page.locator("#roofline")
    expect(roof.locator('input[name="T"]')).to_have_value("1024")
    roof.locator('input[name="T"]').fill("512")
    state = own_page.evaluate("window.inferlab.widgets.find(w => w.id === 'roofline').state")
    wait_for_output(roof, "prefill_ms", cpython_view("roofline", {**state, "T": 512})["outputs"]["prefill_ms"]["value"])
    assert own_page.evaluate("getComputedStyle(document.body).fontFamily") != ""
    assert own_page.evaluate("document.styleSheets.length") > 0
    own_page.reload()
    own_page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)

    # Pages never visited: the offline page at their address, in their language, listing the one page kept.
    for unvisited, lang in (("inference-vs-training/", "zh"), ("en/" + LESSON, "en")):
        own_page.goto(server.url(unvisited))
        expect(own_page).to_have_url(server.url(unvisited))
        expect(own_page.locator("html")).to_have_attribute("lang", lang)
        expect(own_page.locator("h1")).to_have_text(UI[lang]["offline"]["title"])
        expect(own_page.locator("[data-saved-pages][data-filled]")).to_be_attached()
        links = own_page.locator("[data-saved-list] a")
        expect(links).to_have_count(1)
        expect(links).to_have_text(title)
        expect(own_page.locator("[data-saved-none]")).to_be_hidden()
        assert own_page.evaluate("document.styleSheets.length") > 0
        expect(own_page.locator(".site-search[data-ready]")).to_be_visible()
    # (the English one still open) On a phone, in either theme.
    own_page.set_viewport_size({"width": 375, "height": 812})
    own_page.emulate_media(color_scheme="light")
    assert own_page.evaluate("document.documentElement.scrollWidth") <= 375
    own_page.evaluate(AXE.read_text(encoding="utf-8"))
    found = {"light": violations(own_page)}
    own_page.emulate_media(color_scheme="dark")
    own_page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
    found["dark"] = violations(own_page)
    assert found == {"light": [], "dark": []}, found
    own_page.emulate_media(color_scheme="light")
    own_page.set_viewport_size({"width": 1280, "height": 720})
    own_page.locator(".skip-link").focus()
    own_page.keyboard.press("Enter")  # the skip link stays on this page, its <base> notwithstanding
    expect(own_page).to_have_url(server.url("en/" + LESSON) + "#main")
    own_page.locator("[data-saved-list] a").click()
    expect(own_page).to_have_url(server.url(LESSON))
    expect(own_page.locator("h1")).to_have_text(title)
    own_page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)

    # A figure whose plotly.js never came (as if no figure had come near the screen online).
    forget_kept(own_page, "/plotly/")
    own_page.goto(server.url(LESSON))
    own_page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
    own_page.locator("#roofline").scroll_into_view_if_needed()
    figure = own_page.locator('#roofline [data-figure="roofline"]')
    expect(figure).to_have_attribute("data-unavailable", re.compile(UI["zh"]["script"]["widget"]["figure_offline"]
                                                                   .split("{alt}")[0][:12]))
    assert figure.get_attribute("aria-label") in figure.get_attribute("data-unavailable")

    # A search whose index never came.
    forget_kept(own_page, "/pagefind/")
    own_page.goto(server.url(LESSON))
    own_page.locator("#site-search-input").fill("屋顶线")
    expect(own_page.locator("#site-search-status")).to_have_text(WORDS["zh"]["offline"], timeout=15_000)
    expect(own_page.locator("#site-search-results li")).to_have_count(0)


def test_a_rebuilt_site_is_served_fresh_once_online(browser, own_site):
    paths, server = own_site
    context = browser.new_context()
    try:
        page = context.new_page()
        visit(page, server.url(LESSON))
        old_caches = page.evaluate("caches.keys()")
        assert len(old_caches) == 1
        # A redeploy: a lesson's title and a script change.
        lesson = paths.lessons / "zh" / "prefill-decode.md"
        lesson.write_text(lesson.read_text(encoding="utf-8").replace("\ntitle: ", "\ntitle: 新版 ", 1), encoding="utf-8")
        script = paths.static / "js" / "text.js"
        script.write_text(script.read_text(encoding="utf-8") + "\nwindow.__rebuilt = true;\n", encoding="utf-8")
        build.build(paths)
        page.goto(server.url(LESSON))
        expect(page.locator("h1")).to_contain_text("新版")
        page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
        assert page.evaluate("window.__rebuilt") is True
        # The new build's service worker takes over and the old build's cache is deleted.
        caches_become(page, "async (old) => { const names = await caches.keys(); "
                            "return names.length === 1 && !old.includes(names[0]); }", old_caches)
        # Offline now, what is kept is the new build.
        page.evaluate("window.inferlab.offline")
        context.set_offline(True)
        page.goto(server.url(LESSON))
        expect(page.locator("h1")).to_contain_text("新版")
        page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
        assert page.evaluate("window.__rebuilt") is True
    finally:
        context.close()


def test_two_sites_on_one_origin_keep_their_own_offline_copies(browser, tmp_path, serve):
    """Two courses on one github.io account: a visit to the second, a build of its own, leaves the first's copy.
    (Their home pages, where no Python boots: what is kept is a matter of caches, and a lesson's widgets offline are
    test_a_first_visit_keeps_its_page_for_offline_reading_and_the_rest_says_what_needs_a_connection'.)"""
    lessons = some_lessons(tmp_path / "lessons", {LESSON.strip("/")})
    build.build(build.Paths(out=tmp_path / "origin" / "one", lessons=lessons))
    lesson = lessons / "zh" / "prefill-decode.md"
    lesson.write_text(lesson.read_text(encoding="utf-8").replace("\ntitle: ", "\ntitle: 另一门课 ", 1), encoding="utf-8")
    build.build(build.Paths(out=tmp_path / "origin" / "two", lessons=lessons))
    server = serve(tmp_path / "origin")
    context = browser.new_context()
    try:
        page = context.new_page()
        visit(page, server.url("one/"))
        visit(page, server.url("two/"))
        # The second site's worker is active once it controls its page: by then it has cleaned up what it counts as
        # its own older caches.
        eventually(page, "() => navigator.serviceWorker.controller !== null")
        caches_become(page, "async () => (await caches.keys()).length === 2")
        context.set_offline(True)
        page.goto(server.url("one/"))
        expect(page.locator("h1")).to_be_visible()
        expect(page.locator("main")).not_to_contain_text("另一门课")
        page.goto(server.url("two/"))
        expect(page.locator("main")).to_contain_text("另一门课")
    finally:
        context.close()


def test_an_older_builds_unnamed_cache_goes_only_if_it_is_this_sites(browser, tmp_path, serve):
    """Builds before caches were named by site called theirs "inferlab-<version>": the next build of a site
    deletes such a cache when everything in it is that site's, and leaves another site's. (The home page: no Python
    boots.)"""
    lessons, static = some_lessons(tmp_path / "lessons", {LESSON.strip("/")}), tmp_path / "static"
    shutil.copytree(build.ROOT / "site" / "static", static)
    paths = build.Paths(out=tmp_path / "origin" / "one", lessons=lessons, static=static)
    build.build(paths)
    server = serve(tmp_path / "origin")
    context = browser.new_context()
    try:
        page = context.new_page()
        visit(page, server.url("one/"))
        page.evaluate("""async () => {
          const keep = async (name, path, body) => (await caches.open(name)).put(new URL(path, location.href), new Response(body));
          await keep("inferlab-0ld0wn", "/one/prefill-decode/", "this site's, from before");
          await keep("inferlab-0therz", "/two/prefill-decode/", "another site's");
        }""")
        script = static / "js" / "text.js"  # a new build: a new service worker
        script.write_text(script.read_text(encoding="utf-8") + "\nwindow.__rebuilt = true;\n", encoding="utf-8")
        build.build(paths)
        page.goto(server.url("one/"))
        page.wait_for_function("() => window.__rebuilt === true")
        caches_become(page, """async () => {
          const names = await caches.keys();
          return names.length === 2 && names.includes("inferlab-0therz") && names.some(n => n.startsWith("inferlab /one/ "));
        }""")
    finally:
        context.close()
