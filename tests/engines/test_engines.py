"""Every written lesson in Firefox or in WebKit, the engines taking the lessons in turn, each in both languages
(reading() says why; conftest.py says how the engines are driven): every widget becomes ready;
Python in the page renders the lesson's setting as CPython does; one control moved per widget (the one
tests/browser/test_lessons.py moves) gives the view CPython gives, and the page shows it; nothing is
reported that a student must not see (and the watch that says so works in the engine), no request leaves the
origin, and at WebKit's phone width no page scrolls sideways. Then the snapshot: Firefox restores it after a
restart, with a lesson's moves made before it was saved; WebKit keeps it in IndexedDB and restores it.

The time each engine took to get a page's widgets ready is noted (the first page, which starts Python, and the
others, which the shared worker serves) and printed at the end of the run: for reading, not a budget (bench/ times
things).
"""

from __future__ import annotations

import time

import pytest

from builder import urls
from sim.kit import Number, Range, Select
from tests.browser.conftest import ALL_READY, READY_TIMEOUT_MS, cpython_view
from tests.browser.test_lessons import LESSONS, SHOWN, first_change

ENGINE_NAMES = ["firefox", "webkit"]
VIEW_TIMEOUT_S = 15

WIDGETS = """() => [...document.querySelectorAll('[data-widget]')].map(w => ({
  id: w.id, name: w.dataset.widget,
  data: JSON.parse(w.querySelector('script.widget-data').textContent),
  shown: [...w.querySelectorAll('[data-param]')].map(e => e.dataset.param),
}))"""
# Each widget's control set as a student sets it (the events controls.js listens for: a number typed into a range's
# box or a number box, a button of a choice pressed, a menu option picked), all at once; then, once every widget's
# view is the one expected or VIEW_TIMEOUT_S has passed, each widget's view and what it shows. (One round trip per
# page rather than several per widget: the drivers' calls cost more than the page's work.)
MOVE_ALL = f"""async (moves, expected, timeoutMs) => {{
  const shown = {SHOWN};
  const same = (a, b) => a === b || (a !== null && b !== null && typeof a === 'object' && typeof b === 'object'
    && Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => same(a[k], b[k])));
  for (const {{ id, kind, name, value }} of moves) {{
    const at = document.querySelector(`#${{id}} [data-param="${{name}}"]`);
    if (kind === 'radio') {{
      at.querySelector(`input[type="radio"][value="${{value}}"]`).click();
      continue;
    }}
    const field = at.querySelector(kind === 'range' ? 'input[type="number"]' : kind === 'select' ? 'select' : 'input');
    field.value = value;
    field.dispatchEvent(new Event('input', {{ bubbles: true }}));
    field.dispatchEvent(new Event('change', {{ bubbles: true }}));
  }}
  const views = () => moves.map(({{ id }}) => window.inferlab.views[id] ?? null);
  const deadline = performance.now() + timeoutMs;
  while (!views().every((view, i) => same(view, expected[i])) && performance.now() < deadline) {{
    await new Promise((resolve) => setTimeout(resolve, 20));
  }}
  return {{ views: views(), shown: moves.map(({{ id }}) => shown(document.getElementById(id))) }};
}}"""
RENDER_ALL = "(widgets) => Promise.all(widgets.map(({ name, state }) => window.inferlab.runtime.render(name, state)))"
OFF_ORIGIN = """() => performance.getEntriesByType('resource').map(e => e.name)
  .filter(url => !url.startsWith(location.origin + '/') && !/^(data|blob):/.test(url))"""
SIDEWAYS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
SETTLED = "async () => [await window.inferlab.runtime.settled, window.inferlab.runtime.timings.restored]"


def engines():
    return pytest.mark.parametrize("tab", ENGINE_NAMES, indirect=True)


def kind(control) -> str:
    if isinstance(control, Range):
        return "range"
    if isinstance(control, Number):
        return "number"
    if isinstance(control, Select):
        return "radio" if control.style == "buttons" else "select"
    raise TypeError(f"no way to move a {type(control).__name__}")


def until(tab, function: str, *args, timeout_s: float, what: str):
    """Poll a function in the page until it returns something true; that value."""
    deadline = time.monotonic() + timeout_s
    while not (value := tab.run(function, *args)):
        assert time.monotonic() < deadline, f"{tab.name}: {what} within {timeout_s} s"
        time.sleep(0.05)
    return value


# The page the tab was on is marked before a navigation: a driver may report the new page loaded while the old one is
# still the tab's document (seen under load in both engines), its widgets ready.
LEAVING = "() => { window.__leaving = true; }"
ARRIVED = "() => window.__leaving === undefined && document.readyState === 'complete'"


def open_page(tab, url: str) -> None:
    """Open url, and wait until it is the tab's document, loaded."""
    tab.run(LEAVING)
    tab.goto(url)
    until(tab, ARRIVED, timeout_s=READY_TIMEOUT_MS / 1000, what=f"{url} loaded")


def open_all_ready(tab, url: str, record_property, which: str | None = None) -> None:
    """Open url, wait until every widget on it answers, and note how long that took (tests/conftest.py prints it):
    the engine's first page, a later one, or `which`."""
    started = time.monotonic()
    open_page(tab, url)
    until(tab, ALL_READY, timeout_s=READY_TIMEOUT_MS / 1000, what=f"every widget of {url} ready")
    which = which or ("first page" if tab.pages_opened == 0 else "later page")
    record_property("ready", [tab.name, which, time.monotonic() - started])
    tab.pages_opened += 1


def assert_clean(tab) -> None:
    assert tab.run("() => window.__watched") == [], f"{tab.name}: what the page reported"
    assert tab.run(OFF_ORIGIN) == [], f"{tab.name}: requests off the origin"


def move_every_widget(tab, found: list[dict]) -> None:
    """One control moved in each widget (`found`: WIDGETS's answer): the page's view, and what it shows, are
    CPython's."""
    moves, expected = [], []
    for widget in found:
        control, value, view = first_change(widget["name"], widget["data"]["state"], set(widget["shown"]))
        moves.append({"id": widget["id"], "kind": kind(control), "name": control.name, "value": str(value)})
        expected.append(view)
    got = tab.run(MOVE_ALL, moves, expected, VIEW_TIMEOUT_S * 1000)
    for move, view, got_view, shown in zip(moves, expected, got["views"], got["shown"]):
        assert got_view == view, (tab.name, move)
        assert {name: text for name, _, text in shown["outputs"]} == {
            name: view["outputs"][name]["text"] for name, _, _ in shown["outputs"]}, (tab.name, move)


@engines()
def test_what_a_page_reports_is_seen(tab, engines_server):
    """The watch works in this engine: an error logged, one thrown and a failed load are each noted."""
    open_page(tab, engines_server.url(""))  # the home page
    tab.run("""() => {
      console.error('logged on purpose');
      setTimeout(() => { throw new Error('thrown on purpose'); });
      const missing = document.createElement('img');
      missing.src = '/no-such-image.png';
      document.body.append(missing);
    }""")
    seen = until(tab, "() => window.__watched.length >= 3 && window.__watched", timeout_s=10, what="three reports")
    assert [report.split(":")[0] for report in sorted(seen)] == ["console error", "failed to load", "uncaught"]


SLUGS = list(dict.fromkeys(lesson.slug for lesson in LESSONS))


def reading() -> list:
    """(engine, lesson) for every written lesson: each lesson read by one engine, the engines taking the lessons in
    turn and each engine's lessons alternating between the languages, so that every lesson is read by an engine
    besides Chromium, and each engine reads both languages. (Every lesson in each engine
    doubled this module's time, which grows with the course: what differs between engines is the page's own
    JavaScript and CSS, which every lesson shares, and the layout, which each engine meets on half the lessons;
    Python in the page is the same WebAssembly everywhere, and Chromium reads every page in tests/browser.) The
    engine stays a parameter of its own, so that its session fixture starts once, not once a page."""
    pairs = []
    for i, slug in enumerate(SLUGS):
        written = [lesson for lesson in LESSONS if lesson.slug == slug]
        engine = ENGINE_NAMES[i % len(ENGINE_NAMES)]
        lesson = written[(i // len(ENGINE_NAMES)) % len(written)]
        pairs.append(pytest.param(engine, lesson, id=f"{engine}-{lesson.lang}/{slug}", marks=pytest.mark.lesson(slug)))
    return pairs


@pytest.mark.parametrize(("tab", "lesson"), reading(), indirect=["tab"])
def test_every_widget_is_ready_and_answers_as_cpython(tab, engines_server, lesson, record_property):
    record_property("page", urls.page(lesson.lang, lesson.slug))
    open_all_ready(tab, engines_server.url(urls.page(lesson.lang, lesson.slug)), record_property)
    found = tab.run(WIDGETS)
    assert found, "the lesson has widgets"
    # Python in the page renders each widget's lesson setting as CPython does.
    settings = [{"name": w["name"], "state": w["data"]["state"]} for w in found]
    assert tab.run(RENDER_ALL, settings) == [cpython_view(w["name"], w["state"]) for w in settings], tab.name
    move_every_widget(tab, found)
    if tab.name == "webkit":
        assert tab.run(SIDEWAYS) <= 0, "the page scrolls sideways on a phone"
    assert_clean(tab)


def test_firefox_restores_the_snapshot_after_a_restart(new_firefox, engines_server, record_property):
    """In a new profile: the first page's Python, after a move of every widget (the snapshot waits for a pause in
    them), is saved as a snapshot; the first page after a browser restart restores it, and answers the same moves
    as CPython does."""
    lesson = LESSONS[0]
    url = engines_server.url(urls.page(lesson.lang, lesson.slug))
    open_all_ready(new_firefox, url, record_property, which="first page, new profile")
    found = new_firefox.run(WIDGETS)
    move_every_widget(new_firefox, found)
    assert new_firefox.run(SETTLED) == ["saved", False]
    new_firefox.restart()
    open_all_ready(new_firefox, url, record_property, which="first page after a restart")
    assert new_firefox.run(SETTLED) == ["restored", True], "a restarted browser's Python comes from the snapshot"
    move_every_widget(new_firefox, new_firefox.run(WIDGETS))
    assert_clean(new_firefox)


# A second Python for the page in a dedicated worker (as in a browser without SharedWorker, or where the shared one
# has ended): it restores from the snapshot if there is one. Its outcome, whether it was restored, and its view of
# the page's first widget at the lesson's state.
SECOND_PYTHON = """async () => {
  const Runtime = window.inferlab.runtime.constructor;
  const first = document.querySelector('[data-widget]');
  const state = JSON.parse(first.querySelector('script.widget-data').textContent).state;
  const shared = window.SharedWorker;
  delete window.SharedWorker;
  const python = new Runtime();
  python.useWidgets([first.dataset.widget]);
  python.start();
  window.SharedWorker = shared;
  const outcome = await python.settled;
  const view = await python.render(first.dataset.widget, state);
  python.stop();
  return { outcome, restored: python.timings.restored, widget: first.dataset.widget, state, view };
}"""


@pytest.mark.parametrize("tab", ["webkit"], indirect=True)
def test_webkit_keeps_the_snapshot_in_indexeddb_and_restores_it(tab, engines_server, record_property):
    """WebKitGTK has no origin private file system (ARCHITECTURE.md, "The snapshot on WebKit"), so the snapshot is
    kept in IndexedDB (in memory for a WebDriver session, on disk in Safari): saved by the first page's Python, and
    a second Python restores it and answers as CPython does."""
    lesson = LESSONS[0]
    open_all_ready(tab, engines_server.url(urls.page(lesson.lang, lesson.slug)), record_property)
    assert tab.run("() => typeof navigator.storage") == "undefined", "this WebKit now has the file system"
    assert tab.run(SETTLED)[0] == "saved"
    second = tab.run(SECOND_PYTHON)
    assert [second["outcome"], second["restored"]] == ["restored", True]
    assert second["view"] == cpython_view(second["widget"], second["state"])
    assert_clean(tab)
