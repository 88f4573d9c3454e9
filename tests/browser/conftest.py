"""Browser tests: the real built site, served over HTTP, driven in Debian's Chromium by Playwright.

Python is booted once per pytest-xdist worker, not once per test. The tests share one browser context
(`shared_context`), where the site's shared worker keeps one Python up from test to test, as it does for a
student going from page to page. Each test in turn gets its one tab (`site_page`) and navigates to the scenario
it needs; what a test can leave behind (a stored theme, listeners, routes, viewport and media emulation on the tab,
granted permissions, offline mode) is undone after it, so nothing left over from the last test matters.

A test that must see what a context starts with or keeps — a cold start, a failed boot, a restored snapshot,
offline reading, a browser without shared workers — takes a context of its own (Playwright's `page` or
`context`, or one it makes from `browser`) and says so with `@pytest.mark.own_context`. Collection stops with an
error for a browser test that takes its own context unmarked, or that is marked and shares one too.

Every page a test opens through `site_page` has every request outside the site's origin blocked and counted, and
any console error, uncaught exception or CSP violation fails the test.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

import build
from builder import urls
from builder.chromium import ARGS, executable
from builder.serve import Server
from builder.templates import js_number
from sim import widgets
from sim.questions import QUESTIONS
from tests.lessons_copy import some_lessons  # noqa: F401 - the browser tests' vocabulary

READY_TIMEOUT_MS = 60_000
# The course plan (lessons/course.yml): what the checks every page gets (test_lessons.py) and the families that
# read every lesson are parametrised over.
COURSE = build.load_sources(build.Paths())[0].course
LESSONS = [lesson for lang in COURSE.languages() for lesson in COURSE.lessons(lang)]
# A test takes a browser context of its own through pytest-playwright's fixtures (own_page and dedicated_worker
# build on them), or makes one from the browser it asks for.
OWN_CONTEXT_FIXTURES = {"page", "context", "new_context"}
BROWSER_FIXTURES = {"browser", "browser_type"}
# Reported to the browser console, where `site_page` counts it as an error.
CSP_LISTENER = ("document.addEventListener('securitypolicyviolation', e => "
                "console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));")
# (A page opened with wait_until="commit" may have no widget parsed yet: that is not "every widget ready".)
ALL_READY = """() => {
  const widgets = [...document.querySelectorAll('[data-widget]')];
  return widgets.length > 0 && widgets.every(w => w.dataset.state === 'ready') && window.inferlab !== undefined;
}"""


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    wrong = []
    for item in items:
        if here not in Path(item.fspath).parents:
            continue
        item.add_marker(pytest.mark.browser)
        own = item.get_closest_marker("own_context") is not None
        asked = set(inspect.signature(item.function).parameters)
        takes_own = bool(OWN_CONTEXT_FIXTURES & set(item.fixturenames) or BROWSER_FIXTURES & asked)
        shares = "site_page" in item.fixturenames
        if takes_own and not own:
            wrong.append(f"{item.nodeid}: takes a browser context of its own; mark it @pytest.mark.own_context")
        elif own and shares:
            wrong.append(f"{item.nodeid}: marked own_context but uses site_page, the shared context")
    if wrong:
        raise pytest.UsageError("\n".join(wrong))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    chromium = executable(shell=True)
    if not Path(chromium).exists():
        pytest.exit(f"Chromium's headless shell not found at {chromium}: install Debian's chromium-headless-shell "
                    "or set CHROMIUM_SHELL", returncode=3)
    return {**browser_type_launch_args, "executable_path": chromium, "args": ARGS}


@pytest.fixture(scope="session")
def server(built_site):
    s = Server(built_site)
    yield s
    s.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def failed(request) -> bool:
    report = getattr(request.node, "rep_call", None)
    return report is not None and report.failed


@pytest.fixture(autouse=True)
def print_server_log_on_failure(request, server):
    start = len(server.log)
    yield
    if failed(request):
        print("--- server log during the test ---")
        print("\n".join(server.log[start:]))


@pytest.fixture
def serve(request):
    """serve(folder) -> a Server of the test's own (a site it builds or changes), closed after the test; its log is
    printed if the test failed."""
    servers = []

    def start(folder: Path) -> Server:
        servers.append(Server(folder))
        return servers[-1]

    yield start
    for s in servers:
        if failed(request):
            print(f"--- log of the test's server {s.origin} ---")
            print("\n".join(s.log))
        s.close()


class Watch:
    """What a page did that a student must never see: console errors, uncaught errors, foreign requests."""

    def __init__(self):
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.external_requests: list[str] = []

    def assert_clean(self):
        assert self.external_requests == [], "requests left the site's origin"
        assert self.page_errors == [], "uncaught errors"
        assert self.console_errors == [], "console errors"

    def page(self, page):
        """Count this page's console errors and uncaught exceptions."""
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        return page


@pytest.fixture
def watch() -> Watch:
    return Watch()


def guard(context, origin: str, watching) -> None:
    """Report CSP violations to the console, and block every request that leaves `origin`, counted against the
    Watch that `watching()` returns (if any)."""

    def route(r):
        url = r.request.url
        if url.startswith(origin) or url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            if (watch := watching()) is not None:
                watch.external_requests.append(url)
            r.abort()

    context.add_init_script(CSP_LISTENER)
    context.route("**/*", route)


class SharedContext:
    """A browser context kept from test to test, with one tab that each test in turn navigates (a new tab costs a
    renderer process and a cold first page); off-origin requests are counted against the test now running."""

    VIEWPORT = {"width": 1280, "height": 720}  # Playwright's default

    def __init__(self, context, origin: str):
        self.context = context
        self.origin = origin
        self.watch: Watch | None = None
        self.tab = None
        self.listeners: list[tuple[str, object]] = []
        guard(context, origin, lambda: self.watch)

    def page(self):
        """The shared tab, a new one if a test closed it; the listeners a test adds are noted, to be removed."""
        if self.tab is None or self.tab.is_closed():
            self.tab = self.context.new_page()
            self.tab.set_viewport_size(self.VIEWPORT)
            for method in ("on", "once"):
                setattr(self.tab, method, self._noting(getattr(self.tab, method)))
        return self.tab

    def _noting(self, add):
        def noted(event, f):
            self.listeners.append((event, f))
            add(event, f)
        return noted

    def reset(self) -> None:
        """Undo what a test can leave behind: the site's storage (the theme), its listeners, routes, viewport and
        media emulation on the tab, the context's permissions and offline mode; the tab goes to about:blank."""
        tab = self.tab
        try:
            if tab.url.startswith(self.origin):
                tab.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
            for event, f in self.listeners:
                with contextlib.suppress(KeyError):  # a `once` listener that fired is gone already
                    tab.remove_listener(event, f)
            tab.unroute_all(behavior="ignoreErrors")
            tab.set_viewport_size(self.VIEWPORT)
            tab.emulate_media(color_scheme="null", contrast="null", forced_colors="null", media="null",
                              reduced_motion="null")
            tab.goto("about:blank")
        except Exception:  # a tab the test broke is replaced, not repaired
            tab.close()
        finally:
            self.listeners.clear()
        self.context.clear_permissions()
        self.context.set_offline(False)


@pytest.fixture(scope="session")
def shared_context(browser, server):
    """One browser context for every test that shares one: one Python, booted by the first of them."""
    shared = SharedContext(browser.new_context(), server.origin)
    yield shared
    shared.context.close()


@pytest.fixture
def site_page(shared_context, watch):
    """The shared context's tab, for this test; external requests blocked, errors collected and asserted at the
    end, the test's leftovers undone."""
    shared_context.watch = watch
    page = watch.page(shared_context.page())
    try:
        yield page
        watch.assert_clean()
    finally:
        shared_context.reset()
        shared_context.watch = None


@pytest.fixture
def tab_of_its_own(site_page):
    """site_page, closed after the test (the next test gets a new tab of the shared context): for a test that gives
    its page an init script, which a tab keeps for every later page it opens. The shared context's Python serves it:
    no cold boot."""
    yield site_page
    site_page.close()


@pytest.fixture
def own_page(page, server, watch):
    """Like site_page, in a browser context of the test's own (mark the test own_context)."""
    guard(page.context, server.origin, lambda: watch)
    yield watch.page(page)
    watch.assert_clean()


def of_lessons(lessons) -> list:
    """Parameters, one per lesson, each marked as a test of its lesson (pytest tests/browser --lesson SLUG)."""
    return [pytest.param(lesson, id=f"{lesson.lang}/{lesson.slug}", marks=pytest.mark.lesson(lesson.slug))
            for lesson in lessons]


def lesson_url(server, lesson) -> str:
    return server.url(urls.page(lesson.lang, lesson.slug))


def open_ready(page, url: str, widget: str = "roofline"):
    """Open url and wait until the widget's Python runtime answers."""
    page.goto(url)
    page.wait_for_selector(f'#{widget}[data-state="ready"]', timeout=READY_TIMEOUT_MS)
    return page.locator(f"#{widget}")


# What a page that never went ready shows: whether its scripts ran, and each widget's state and status line.
STUCK = """() => ({scripts: window.inferlab !== undefined, controlled: !!(navigator.serviceWorker || {}).controller,
  widgets: [...document.querySelectorAll('[data-widget]')].filter(w => w.dataset.state !== 'ready').map(w =>
    `${w.id}: ${w.dataset.state} (${((w.querySelector('.widget-status') || {}).textContent || '').replace(/\\s+/g, ' ').trim()})`)})"""


def open_all_ready(page, url: str) -> None:
    """Open url and wait until every widget on it answers (a page with none only loads); if they do not, fail
    saying what the page shows and what its console said."""
    said = []
    listen = lambda message: said.append(f"{message.type}: {message.text}")  # noqa: E731
    page.on("console", listen)
    try:
        page.goto(url)
        if page.locator("[data-widget]").count():
            try:
                page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
            except PlaywrightTimeoutError:
                raise AssertionError(f"{url}: not every widget ready after {READY_TIMEOUT_MS} ms: "
                                     f"{page.evaluate(STUCK)}; console: {said[-20:]}") from None
    finally:
        page.remove_listener("console", listen)


def show_figures(widget):
    """Scroll a widget into view and wait for its Plotly figures (drawn when they near the viewport) to show the
    newest view."""
    widget.scroll_into_view_if_needed()
    expect(widget.locator(".js-plotly-plot")).to_have_count(widget.locator("[data-figure]").count())
    expect(widget.locator("[data-figure][data-drawing]")).to_have_count(0)
    return widget


def plotted(plot, expression: str):
    """`expression` (a function of a plot's element) once the plot shows the newest view: a move of its points
    lands on the next frame (widget.js drawPlot)."""
    expect(plot).not_to_have_attribute("data-drawing", re.compile(""))
    return plot.evaluate(expression)


_VIEWS: dict[str, str] = {}  # a worker's views so far, as JSON: a view is a function of its widget and state


def cpython_view(widget: str, state: dict) -> dict:
    """CPython's view of a widget for a state, through JSON as the browser receives it (a fresh copy each call: the
    serving widgets take up to a second a render, and the same states come back from test to test)."""
    state = {"lang": "zh", **state}
    key = json.dumps([widget, state], sort_keys=True)
    if key not in _VIEWS:
        _VIEWS[key] = json.dumps(widgets.render(widget, state))
    return json.loads(_VIEWS[key])


def island(widget) -> dict:
    """A widget's JSON island: its name, the lesson's settings (with the page's language) and CPython's view."""
    return json.loads(widget.locator("script.widget-data").text_content())


def browser_view(page, widget_id: str) -> dict:
    """The newest view the page received from Python for a widget."""
    return page.evaluate(f"window.inferlab.views[{json.dumps(widget_id)}]")


def wait_for_output(widget, name: str, value) -> None:
    """Wait until a readout shows `value` (data-value holds it as JavaScript prints numbers)."""
    expect(widget.locator(f'output[name="{name}"]').first).to_have_attribute("data-value", str(js_number(value)))


def lesson_view(page, widget_id: str, **changes) -> dict:
    """CPython's view of a widget on this page: the lesson's settings (with the page's language) plus changes."""
    data = json.loads(page.locator(f"#{widget_id} script.widget-data").text_content())
    return cpython_view(data["widget"], {**data["state"], **changes})


def readouts_show(widget, view: dict, readouts) -> None:
    """Every readout named shows this view, value and text."""
    for name in readouts:
        wait_for_output(widget, name, view["outputs"][name]["value"])
        expect(widget.locator(f'output[name="{name}"]').first).to_have_text(view["outputs"][name]["text"])


def _commit_guess(page, box_id: str, guess: float, enter: bool):
    """Type a guess into a predict box, its answer and worked answer still folded, and commit it (the button, or
    Enter); return the box and its worked answer."""
    box = page.locator(f"#{box_id}")
    worked = page.locator(f'details.worked-answer[data-answer-for="{box_id}"]')
    expect(box.locator(".predict-answer")).to_be_hidden()
    expect(worked).to_have_js_property("open", False)
    field = box.locator('input[name="guess"]')
    field.fill(f"{guess:g}")
    if enter:
        field.press("Enter")
    else:
        box.locator("button.commit").click()
    return box, worked


def grades_right(page, box_id: str, guess: float) -> None:
    """A guess committed with the button is graded right as CPython grades it; the answer and the worked answer
    unfold."""
    box, worked = _commit_guess(page, box_id, guess, enter=False)
    right = lesson_view(page, box_id, guess=guess)
    assert right["flags"]["correct"]
    expect(box.locator('output[name="verdict"]')).to_have_text(right["outputs"]["verdict"]["text"])
    expect(box.locator('[data-flag="mistake"]')).to_have_attribute("hidden", "")
    expect(box.locator('output[name="expected"]')).to_have_text(right["outputs"]["expected"]["text"])
    expect(box.locator(".predict-answer")).to_be_visible()
    expect(worked).to_have_js_property("open", True)
    assert browser_view(page, box_id) == right


def grades_as_mistake(page, box_id: str, guess: float, sentence: str) -> None:
    """A guess committed with Enter gets the named mistake's sentence, as CPython grades it; the worked answer
    unfolds."""
    box, worked = _commit_guess(page, box_id, guess, enter=True)
    named = lesson_view(page, box_id, guess=guess)
    assert not named["flags"]["correct"] and named["outputs"]["verdict"]["text"] == sentence
    expect(box.locator('output[name="verdict"]')).to_have_text(sentence)
    expect(box.locator('[data-flag="mistake"]')).not_to_have_attribute("hidden", "")
    expect(worked).to_have_js_property("open", True)
    assert browser_view(page, box_id) == named


def worked_answers_folded(page, box_ids) -> None:
    """These boxes are unanswered: their worked answers stay folded."""
    for box_id in box_ids:
        expect(page.locator(f'details.worked-answer[data-answer-for="{box_id}"]')).to_have_js_property("open", False)


def mistake_sentence(key: str, mistake: str, lang: str) -> str:
    """Question `key`'s sentence for its mistake named `mistake`, in `lang`."""
    q = QUESTIONS[key]
    return q.mistake_text([m.key for m in q.mistakes].index(mistake), lang)


def figure_shows(widget, name: str, view: dict) -> None:
    """The figure is drawn, and says in words what CPython's view of it says."""
    show_figures(widget)
    figure = widget.locator(f'[data-figure="{name}"]')
    expect(figure).to_have_count(1)
    expect(widget.locator(f'[data-figure="{name}"].js-plotly-plot')).to_have_count(1)
    expect(figure).to_have_attribute("aria-label", view["figures"][name]["alt"])


def eventually(page, predicate: str, arg=None, timeout_s: float = 30) -> None:
    """Poll a predicate in the page until it holds; unlike wait_for_function, an async one is awaited."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(predicate, arg):
        assert time.monotonic() < deadline, predicate
        time.sleep(0.2)


@pytest.fixture
def dedicated_worker(page):
    """Python in a dedicated worker for each page, as in browsers without SharedWorker. Its requests go through the
    page's network, where Playwright can route them: a shared worker's requests pass by every Playwright route."""
    page.context.add_init_script("delete window.SharedWorker;")
    return page


def site_copy(built_site: Path, out: Path, *, without: str) -> Path:
    """A copy of the built site (hard links) lacking one file: a download that fails whatever the worker's kind."""
    shutil.copytree(built_site, out, copy_function=os.link)
    (out / without).unlink()  # unlinks the copy's name only: the built site keeps its file
    return out


def choose(radio) -> None:
    """Pick a choice button as a student does: click its label, which draws it (the radio inside is hidden). A
    click on the label waits until it is drawn; a forced click on the radio would not, and misses in a part of the
    lesson the browser has not laid out yet."""
    radio.locator("xpath=ancestor::label[1]").click()
