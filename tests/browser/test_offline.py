"""A lesson visited once opens again offline with working widgets; a rebuilt site is never served stale online."""

import shutil

import pytest
from playwright.sync_api import expect

import build
from builder.serve import Server
from tests.browser.conftest import READY_TIMEOUT_MS, cpython_view, eventually, wait_for_output

LESSON = "prefill-decode/"
ALL_READY = "() => [...document.querySelectorAll('[data-widget]')].every(w => w.dataset.state === 'ready')"


def visit(page, url: str) -> None:
    """Open a page, wait until its widgets answer and it is kept for offline reading."""
    page.goto(url)
    page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
    assert page.evaluate("window.inferlab.offline") is True
    page.evaluate("window.inferlab.runtime.settled")


@pytest.fixture
def own_site(tmp_path):
    """A site of this test's own, to rebuild while a browser has it open: (paths, server)."""
    lessons, static = tmp_path / "lessons", tmp_path / "static"
    shutil.copytree(build.ROOT / "lessons", lessons)
    shutil.copytree(build.ROOT / "site" / "static", static)
    paths = build.Paths(out=tmp_path / "_site", lessons=lessons, static=static)
    build.build(paths)
    server = Server(paths.out)
    yield paths, server
    server.close()


def test_a_visited_lesson_reopens_offline_with_working_widgets(site_page, server):
    visit(site_page, server.url(LESSON))
    site_page.context.set_offline(True)
    # A scenario link to the page, offline: the page, its styles, scripts, Python and the simulator all answer.
    site_page.goto(server.url(LESSON) + "?roofline.T=1024")
    site_page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
    roof = site_page.locator("#roofline")
    expect(roof.locator('input[name="T"]')).to_have_value("1024")
    roof.locator('input[name="T"]').fill("512")
    state = site_page.evaluate("window.inferlab.widgets.find(w => w.id === 'roofline').state")
    wait_for_output(roof, "prefill_ms", cpython_view("roofline", {**state, "T": 512})["outputs"]["prefill_ms"]["value"])
    assert site_page.evaluate("getComputedStyle(document.body).fontFamily") != ""
    assert site_page.evaluate("document.styleSheets.length") > 0
    # Reloaded offline, again.
    site_page.reload()
    site_page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)


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
        eventually(page, "async (old) => { const names = await caches.keys(); "
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


def test_two_sites_on_one_origin_keep_their_own_offline_copies(browser, tmp_path):
    """Two courses on one github.io account: a visit to the second, a build of its own, leaves the first's copy."""
    lessons = tmp_path / "lessons"
    shutil.copytree(build.ROOT / "lessons", lessons)
    build.build(build.Paths(out=tmp_path / "origin" / "one", lessons=lessons))
    lesson = lessons / "zh" / "prefill-decode.md"
    lesson.write_text(lesson.read_text(encoding="utf-8").replace("\ntitle: ", "\ntitle: 另一门课 ", 1), encoding="utf-8")
    build.build(build.Paths(out=tmp_path / "origin" / "two", lessons=lessons))
    server = Server(tmp_path / "origin")
    context = browser.new_context()
    try:
        page = context.new_page()
        visit(page, server.url("one/" + LESSON))
        visit(page, server.url("two/" + LESSON))
        # The second site's worker is active once it controls its page: by then it has cleaned up what it counts as
        # its own older caches.
        eventually(page, "() => navigator.serviceWorker.controller !== null")
        eventually(page, "async () => (await caches.keys()).length === 2")
        context.set_offline(True)
        page.goto(server.url("one/" + LESSON))
        expect(page.locator("h1")).not_to_contain_text("另一门课")
        page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
        page.goto(server.url("two/" + LESSON))
        expect(page.locator("h1")).to_contain_text("另一门课")
        page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
    finally:
        context.close()
        server.close()


def test_an_older_builds_unnamed_cache_goes_only_if_it_is_this_sites(browser, tmp_path):
    """Builds before caches were named by site called theirs "inferlab-<version>": the next build of a site
    deletes such a cache when everything in it is that site's, and leaves another site's."""
    lessons, static = tmp_path / "lessons", tmp_path / "static"
    shutil.copytree(build.ROOT / "lessons", lessons)
    shutil.copytree(build.ROOT / "site" / "static", static)
    paths = build.Paths(out=tmp_path / "origin" / "one", lessons=lessons, static=static)
    build.build(paths)
    server = Server(tmp_path / "origin")
    context = browser.new_context()
    try:
        page = context.new_page()
        visit(page, server.url("one/" + LESSON))
        page.evaluate("""async () => {
          const keep = async (name, path, body) => (await caches.open(name)).put(new URL(path, location.href), new Response(body));
          await keep("inferlab-0ld0wn", "/one/prefill-decode/", "this site's, from before");
          await keep("inferlab-0therz", "/two/prefill-decode/", "another site's");
        }""")
        script = static / "js" / "text.js"  # a new build: a new service worker
        script.write_text(script.read_text(encoding="utf-8") + "\nwindow.__rebuilt = true;\n", encoding="utf-8")
        build.build(paths)
        page.goto(server.url("one/" + LESSON))
        page.wait_for_function("() => window.__rebuilt === true")
        eventually(page, """async () => {
          const names = await caches.keys();
          return names.length === 2 && names.includes("inferlab-0therz") && names.some(n => n.startsWith("inferlab /one/ "));
        }""")
    finally:
        context.close()
        server.close()
