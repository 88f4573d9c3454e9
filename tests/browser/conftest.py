"""Browser tests: the real built site, served over HTTP, driven in Debian's Chromium by Playwright.

Every page a test opens through `site_page` has every request outside the site's origin blocked and
counted, and any console error or uncaught exception fails the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

import build
from builder.chromium import ARGS, executable
from builder.serve import Server
from builder.templates import js_number
from sim import widgets

READY_TIMEOUT_MS = 60_000


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    chromium = executable()
    if not Path(chromium).exists():
        pytest.exit(f"Chromium not found at {chromium}: install Debian's chromium or set CHROMIUM", returncode=3)
    return {**browser_type_launch_args, "executable_path": chromium, "args": ARGS}


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "_site"
    build.build(build.Paths(out=out))
    return out


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


@pytest.fixture(autouse=True)
def print_server_log_on_failure(request, server):
    start = len(server.log)
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print("--- server log during the test ---")
        print("\n".join(server.log[start:]))


class Watch:
    """What a page did that a student must never see: console errors, uncaught errors, foreign requests."""

    def __init__(self):
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.external_requests: list[str] = []
        self.csp_violations: list[str] = []

    def assert_clean(self):
        assert self.external_requests == [], "requests left the site's origin"
        assert self.page_errors == [], "uncaught errors"
        assert self.console_errors == [], "console errors"


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def site_page(page, server, watch):
    """A page on the served site; external requests blocked, errors collected and asserted at the end."""

    def route(r):
        if r.request.url.startswith(server.origin) or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            watch.external_requests.append(r.request.url)
            r.abort()

    page.context.route("**/*", route)
    page.on("console", lambda m: watch.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: watch.page_errors.append(str(e)))
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => "
        "console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));"
    )
    yield page
    watch.assert_clean()


def open_ready(page, url: str, widget: str = "roofline"):
    """Open url and wait until the widget's Python runtime answers."""
    page.goto(url)
    page.wait_for_selector(f'#{widget}[data-state="ready"]', timeout=READY_TIMEOUT_MS)
    return page.locator(f"#{widget}")


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


def cpython_view(widget: str, state: dict) -> dict:
    """CPython's view of a widget for a state, through JSON as the browser receives it."""
    return json.loads(json.dumps(widgets.render(widget, {"lang": "zh", **state})))


def browser_view(page, widget_id: str) -> dict:
    """The newest view the page received from Python for a widget."""
    return page.evaluate(f"window.inferlab.views[{json.dumps(widget_id)}]")


def wait_for_output(widget, name: str, value) -> None:
    """Wait until a readout shows `value` (data-value holds it as JavaScript prints numbers)."""
    expect(widget.locator(f'output[name="{name}"]').first).to_have_attribute("data-value", str(js_number(value)))


def eventually(page, predicate: str, arg=None, timeout_s: float = 30) -> None:
    """Poll a predicate in the page until it holds; unlike wait_for_function, an async one is awaited."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(predicate, arg):
        assert time.monotonic() < deadline, predicate
        time.sleep(0.2)


def assert_every_question_grades_its_own_answer(page, verdict: str = "对了") -> int:
    """Answer each predict box on the page with the simulator's own figure; each must say it is right."""
    boxes = page.locator('[data-widget="predict"]')
    for i in range(boxes.count()):
        box = boxes.nth(i)
        question = json.loads(box.locator("script.widget-data").text_content())["state"]["question"]
        right = widgets.render("predict", {"question": question, "guess": 1})["outputs"]["expected"]["value"]
        box.locator('input[name="guess"]').fill(str(right))
        box.locator("button.commit").click()
        expect(box.locator('output[name="verdict"]')).to_contain_text(verdict)
    return boxes.count()


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
