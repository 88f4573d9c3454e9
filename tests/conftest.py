"""Options for the whole suite: `--lesson SLUG` keeps only the browser tests of one lesson (those marked
`@pytest.mark.lesson(SLUG)`: its own modules, the modules of its widgets, and its rows of test_lessons.py).
At the end of a run, the ready times tests/engines noted, per engine (here, as pytest-xdist's controller loads only
this conftest)."""

from __future__ import annotations

import fcntl
import statistics
from pathlib import Path

import pytest

import build


def pytest_addoption(parser):
    parser.addoption("--lesson", action="append", default=[], metavar="SLUG",
                     help="run only the browser tests of this lesson (may be given more than once)")


def pytest_collection_modifyitems(config, items):
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
