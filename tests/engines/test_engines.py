"""Every written lesson, in each language, in Firefox and in WebKit (conftest.py says how they are driven): every
widget becomes ready; Python in the page renders the lesson's setting as CPython does; one control moved per widget
(the one tests/browser/test_lessons.py moves) gives the view CPython gives, and the page shows it; nothing is
reported that a student must not see (and the watch that says so works in the engine), no request leaves the
origin, and at WebKit's phone width no page scrolls sideways. Then the snapshot: what each engine makes of it, and
the first page after a browser restart.

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
from tests.browser.test_lessons import LESSONS, SHOWN, first_change, of_lessons

ENGINE_NAMES = ["firefox", "webkit"]
VIEW_TIMEOUT_S = 15

WIDGETS = """() => [...document.querySelectorAll('[data-widget]')].map(w => ({
  id: w.id, name: w.dataset.widget,
  data: JSON.parse(w.querySelector('script.widget-data').textContent),
  shown: [...w.querySelectorAll('[data-param]')].map(e => e.dataset.param),
}))"""
# As a student sets a control (the events controls.js listens for): a number typed into a range's box or a number
# box, a button of a choice pressed, a menu option picked.
MOVE = """(id, kind, name, value) => {
  const at = document.querySelector(`#${id} [data-param="${name}"]`);
  if (kind === 'radio') return at.querySelector(`input[type="radio"][value="${value}"]`).click();
  const field = at.querySelector(kind === 'range' ? 'input[type="number"]' : kind === 'select' ? 'select' : 'input');
  field.value = value;
  field.dispatchEvent(new Event('input', { bubbles: true }));
  field.dispatchEvent(new Event('change', { bubbles: true }));
}"""
VIEW = "(id) => window.inferlab.views[id] ?? null"
RENDER = "(name, state) => window.inferlab.runtime.render(name, state)"
SHOWS = f"(id) => ({SHOWN})(document.getElementById(id))"
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


def open_all_ready(tab, url: str, record_property, which: str | None = None) -> None:
    """Open url, wait until every widget on it answers, and note how long that took (tests/conftest.py prints it):
    the engine's first page, a later one, or `which`."""
    started = time.monotonic()
    tab.goto(url)
    until(tab, ALL_READY, timeout_s=READY_TIMEOUT_MS / 1000, what=f"every widget of {url} ready")
    which = which or ("first page" if tab.pages_opened == 0 else "later page")
    record_property("ready", [tab.name, which, time.monotonic() - started])
    tab.pages_opened += 1


def assert_clean(tab) -> None:
    assert tab.run("() => window.__watched") == [], f"{tab.name}: what the page reported"
    assert tab.run(OFF_ORIGIN) == [], f"{tab.name}: requests off the origin"


@engines()
def test_what_a_page_reports_is_seen(tab, engines_server):
    """The watch works in this engine: an error logged, one thrown and a failed load are each noted."""
    tab.goto(engines_server.url(""))  # the home page
    tab.run("""() => {
      console.error('logged on purpose');
      setTimeout(() => { throw new Error('thrown on purpose'); });
      const missing = document.createElement('img');
      missing.src = '/no-such-image.png';
      document.body.append(missing);
    }""")
    seen = until(tab, "() => window.__watched.length >= 3 && window.__watched", timeout_s=10, what="three reports")
    assert [report.split(":")[0] for report in sorted(seen)] == ["console error", "failed to load", "uncaught"]


@engines()
@pytest.mark.parametrize("lesson", of_lessons(LESSONS))
def test_every_widget_is_ready_and_answers_as_cpython(tab, engines_server, lesson, record_property):
    open_all_ready(tab, engines_server.url(urls.page(lesson.lang, lesson.slug)), record_property)
    found = tab.run(WIDGETS)
    assert found, "the lesson has widgets"
    for widget in found:
        widget_id, name, state = widget["id"], widget["name"], widget["data"]["state"]
        default = cpython_view(name, state)
        assert tab.run(RENDER, name, state) == default, (tab.name, widget_id)
        control, value, expected = first_change(name, state, set(widget["shown"]))
        tab.run(MOVE, widget_id, kind(control), control.name, str(value))
        deadline = time.monotonic() + VIEW_TIMEOUT_S
        while (got := tab.run(VIEW, widget_id)) != expected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert got == expected, (tab.name, widget_id, control.name, value)
        shown = tab.run(SHOWS, widget_id)
        assert {name: text for name, _, text in shown["outputs"]} == {
            name: expected["outputs"][name]["text"] for name, _, _ in shown["outputs"]}, (tab.name, widget_id)
    if tab.name == "webkit":
        assert tab.run(SIDEWAYS) <= 0, "the page scrolls sideways on a phone"
    assert_clean(tab)


@engines()
def test_after_a_browser_restart_a_page_gets_python_again(tab, engines_server, record_property):
    """Firefox keeps the snapshot, and the first page after a restart restores it. WebKit refuses it here (WebDriver
    sessions of WebKitGTK keep no files: ARCHITECTURE.md, "The snapshot on WebKit"), and Python boots in full again."""
    lesson = LESSONS[0]
    url = engines_server.url(urls.page(lesson.lang, lesson.slug))
    open_all_ready(tab, url, record_property)
    outcome, _ = tab.run(SETTLED)
    assert outcome == {"firefox": "saved", "webkit": "refused"}[tab.name], outcome
    tab.restart()
    open_all_ready(tab, url, record_property, which="first page after a restart")
    assert tab.run(SETTLED) == [{"firefox": "restored", "webkit": "refused"}[tab.name],
                                tab.name == "firefox"], "a fresh Python, restored where a snapshot was kept"
    assert_clean(tab)

