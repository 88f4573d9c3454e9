"""Options for the whole suite: `--lesson SLUG` keeps only the browser tests of one lesson (those marked
`@pytest.mark.lesson(SLUG)`: its own modules, the modules of its widgets, and its rows of test_lessons.py).
At the end of a run, the ready times tests/engines noted, per engine (here, as pytest-xdist's controller loads only
this conftest)."""

from __future__ import annotations

import statistics

import pytest


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
