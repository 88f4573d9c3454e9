"""Options for the whole suite: `--lesson SLUG` keeps only the browser tests of one lesson (those marked
`@pytest.mark.lesson(SLUG)`: its own modules, the modules of its widgets, and its rows of test_lessons.py).
At the end of a run, the ready times tests/engines noted, per engine (here, as pytest-xdist's controller loads only
this conftest).

How the suite is spread over pytest-xdist's workers (`make test`: `-n auto --dist loadgroup`, two workers on this
machine's two cores, both CPU-bound): the tests are handed out one at a time, in collection order, each to the
worker that has finished its last, except that every test in tests/engines is one unit of work on one worker, so
that Firefox and WebKit (and the Python each boots, 15 and 45 s of a core) start once in the run, not once a worker,
and so are the tests of tests/builder/test_stdlib.py, which share one trace (UNITS). (pytest-xdist's own groups are
not applied under pytest 9.2, which no longer reads the node id they rewrite.) The collection order puts the longest
work first, so that the run does not end with one worker on a long test and the other idle: tests/engines and the
long tests that need no built site (marked `early`: one worker computes while the other builds the site), then the
browser tests with a browser context of their own (each boots Python cold), then the other browser tests, the
builder's and the simulator's."""

from __future__ import annotations

import fcntl
import statistics
from pathlib import Path

import pytest
from xdist.scheduler import LoadGroupScheduling

import build


def pytest_addoption(parser):
    parser.addoption("--lesson", action="append", default=[], metavar="SLUG",
                     help="run only the browser tests of this lesson (may be given more than once)")


def weight_class(item) -> int:
    """Where a test goes in the collection order: the longest work first (the module docstring says why). A long
    test that needs no built site is marked `early` and goes first with tests/engines: while one worker builds the
    site every browser test needs (10 s of a core in a fresh clone), the other computes it rather than wait."""
    path = Path(item.fspath).as_posix()
    if "/tests/engines/" in path or item.get_closest_marker("early"):
        return 0
    if "/tests/browser/" in path:
        return 1 if item.get_closest_marker("own_context") else 2
    return 3 if "/tests/builder/" in path else 4


# The tests that share something dear, each set one unit of work: Firefox and WebKit (tests/engines), and the
# standard library's trace in Pyodide (tests/builder/test_stdlib.py: 20 s of a core where the cache is cold, as in a
# fresh clone; spread over two workers, one would wait idle on the other's trace).
UNITS = {"tests/engines/": "engines", "tests/builder/test_stdlib.py": "stdlib"}


class SuiteScheduling(LoadGroupScheduling):
    """loadgroup's scheduler, with each set of UNITS in one unit of work."""

    def _split_scope(self, nodeid: str) -> str:
        return next((unit for start, unit in UNITS.items() if nodeid.startswith(start)), None) \
            or super()._split_scope(nodeid)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    return SuiteScheduling(config, log) if config.getvalue("dist") == "loadgroup" else None


@pytest.hookimpl(trylast=True)  # after tests/browser/conftest.py has marked its tests
def pytest_collection_modifyitems(config, items):
    items.sort(key=weight_class)  # stable: each module's tests keep their order
    slugs = config.getoption("lesson")
    if not slugs:
        return
    kept, dropped, known = [], [], set()
    for item in items:
        marks = {m.args[0] for m in item.iter_markers("lesson")}
        known |= marks
        (kept if marks & set(slugs) else dropped).append(item)
    if unknown := [slug for slug in slugs if slug not in known]:
        raise pytest.UsageError(f"no test is marked for lesson {', '.join(unknown)}; lessons with tests: "
                                f"{', '.join(sorted(known))}")
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, worker_id) -> Path:
    """The site as built, once for the whole run: under pytest-xdist the first worker to ask builds it (under a lock)
    and the others wait for it and read the same folder, rather than each paying a build. Tests only read it: one
    that needs a changed site copies it first (tests/browser/conftest.py site_copy, tests/engines/conftest.py).
    It takes the figures lessons/frozen.json holds, as every build does: tests/builder/test_frozen.py holds that
    store to a build that computes every figure."""
    if worker_id == "master":
        out = tmp_path_factory.mktemp("site") / "_site"
        build.build(build.Paths(out=out))
        return out
    run = tmp_path_factory.getbasetemp().parent  # this run's folder, the same for all its workers
    out, done = run / "site" / "_site", run / "site" / "built"
    with open(run / "site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            out.parent.mkdir(exist_ok=True)
            build.build(build.Paths(out=out))
            done.touch()
    return out


def pytest_terminal_summary(terminalreporter):
    times: dict[tuple[str, str], list[float]] = {}
    for report in terminalreporter.stats.get("passed", []):
        for key, value in getattr(report, "user_properties", []):
            if key == "ready":
                engine, which, seconds = value
                times.setdefault((engine, which), []).append(seconds)
    if not times:
        return
    terminalreporter.section("every widget ready, per engine (tests/engines)")
    for (engine, which), seconds in sorted(times.items()):
        terminalreporter.write_line(f"{engine:8} {which:30} median {statistics.median(seconds):5.2f} s  "
                                    f"(max {max(seconds):.2f} s, {len(seconds)} pages)")
