"""The cross-engine tests: the built site in Firefox and WebKit, the engines Chromium's tests cannot speak for.

Each engine is started once per pytest-xdist worker that runs its tests (drivers.py), and reads the course page
after page in one tab, as a student does, so that one Python, in the site's shared worker, serves every page after
the first. Firefox reads at a desktop's width; WebKit, the engine of every iPhone's browser, at a phone's (375 x 812).

The site is built for these tests and served with one file added: watch.js, loaded first by every page, keeps what
the page reports (console and uncaught errors, failed loads, CSP violations) for the tests to read.

A machine without an engine fails its tests with how to install it; `SKIP_ENGINES=firefox,webkit` (either or both)
skips them instead, and pytest's summary says so.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from builder.serve import Server
from tests.engines.drivers import ENGINES, XVFB

HERE = Path(__file__).parent
SKIPPED = {name.strip() for name in os.environ.get("SKIP_ENGINES", "").split(",") if name.strip()}
VIEWPORTS = {"firefox": (1280, 800), "webkit": (375, 812)}
PACKAGES = {"firefox": "firefox-esr", "webkit": "webkit2gtk-driver and xvfb"}
CHARSET = re.compile(rb"<meta charset=[^>]*>")


def pytest_collection_modifyitems(config, items):
    if unknown := SKIPPED - set(ENGINES):
        raise pytest.UsageError(f"SKIP_ENGINES names {', '.join(sorted(unknown))}; the engines are "
                                f"{', '.join(ENGINES)}")
    for item in items:
        if HERE in Path(item.fspath).parents:
            item.add_marker(pytest.mark.engines)


@pytest.fixture(scope="session")
def watched_site(tmp_path_factory, built_site) -> Path:
    """The site as built (a copy of the suite's), every page loading watch.js first."""
    out = tmp_path_factory.mktemp("engines") / "_site"
    shutil.copytree(built_site, out)
    shutil.copy(HERE / "watch.js", out / "watch.js")
    for page in out.rglob("*.html"):
        html = page.read_bytes()
        watched = CHARSET.sub(lambda m: m[0] + b'<script src="/watch.js"></script>', html, count=1)
        assert watched != html, f"{page}: no <meta charset> to put watch.js after"
        page.write_bytes(watched)
    return out


@pytest.fixture(scope="session")
def engines_server(watched_site):
    s = Server(watched_site)
    yield s
    s.close()


def start(name: str):
    """The engine `name`, started, its viewport sized; its test skipped by SKIP_ENGINES, or failed with what to
    install where it is missing."""
    if name in SKIPPED:
        pytest.skip(f"{name}: skipped by SKIP_ENGINES")
    engine, binary = ENGINES[name]
    for needed in (binary, *([XVFB] if name == "webkit" else [])):
        if not Path(needed).exists():
            pytest.fail(f"{name}: {needed} not found; install {PACKAGES[name]} (make test does, as root), or skip "
                        f"this engine with SKIP_ENGINES={name}", pytrace=False)
    started = engine()
    try:
        started.set_viewport(*VIEWPORTS[name])
    except BaseException:
        started.close()
        raise
    started.pages_opened = 0
    return started


@pytest.fixture(scope="session")
def firefox_tab():
    started = start("firefox")
    yield started
    started.close()


@pytest.fixture(scope="session")
def webkit_tab():
    started = start("webkit")
    yield started
    started.close()


@pytest.fixture
def tab(request):
    """The engine named by the test's parameter, started once for the session and kept from test to test. (Each
    engine is a session fixture of its own: a session fixture parametrised by the test would be set up again
    wherever its parameter's index changes, as it does from lesson to lesson in test_engines.py's reading().)"""
    return request.getfixturevalue(f"{request.param}_tab")


@pytest.fixture
def new_firefox():
    """A Firefox of the test's own, in a new profile."""
    started = start("firefox")
    yield started
    started.close()
