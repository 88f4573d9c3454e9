#!/usr/bin/env python3
"""Measure the budgets of DESIGN.md §4 and print them. Asserts nothing: timings belong here, not in tests.

    python bench/run.py [--runs 5] [--moves 100]

- load: first contentful paint; navigation -> every widget data-state="ready", beside a bare Pyodide
  page booting in a module worker, measured alternately in the same browser; main-thread long tasks.
- interaction: a slider move -> readouts and plot updated (Plotly's afterplot), over N moves.
- build: full site build, best and median of several runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import build  # noqa: E402
from builder.chromium import ARGS, executable  # noqa: E402
from builder.serve import Server  # noqa: E402

LESSONS = ("prefill-decode/", "inference-vs-training/")
LESSON = LESSONS[0]  # the page whose roofline slider is timed
PAGES_CACHE = "max-age=600"  # what GitHub Pages sends with every file: repeat visits are timed as students get them
# Records when every widget is ready, and every long task, from the very start of the page.
INIT_SCRIPT = """
window.__longTasks = [];
new PerformanceObserver(list => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
  .observe({type: 'longtask', buffered: true});
new MutationObserver(() => {
  const all = [...document.querySelectorAll('[data-widget]')];
  const ready = all.length && all.every(w => w.dataset.state === 'ready');
  if (ready && !window.__readyAt) window.__readyAt = performance.now();
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-state']});
"""
MOVE = """
async (position) => {
  const slider = document.querySelector('#roofline-T-slider');
  const plot = document.querySelector('[data-figure="roofline"]');
  const done = new Promise(resolve => plot.once('plotly_afterplot', resolve));
  const t0 = performance.now();
  slider.value = String(position);
  slider.dispatchEvent(new Event('input', {bubbles: true}));
  await done;
  return performance.now() - t0;
}
"""


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def measure_load(browser, server: Server, runs: int, lesson: str) -> dict:
    """Alternate a bare Pyodide page and the lesson, `runs` times each, in one browser profile."""
    bare, ready_ms, fcp, long_tasks = [], [], [], []
    context = browser.new_context()  # one profile, as a returning student has: wasm code cache warm after run 1
    for _ in range(runs):
        for kind in ("bare", "lesson"):
            page = context.new_page()
            page.add_init_script(INIT_SCRIPT)
            page.goto(server.url("bench/bare/" if kind == "bare" else lesson))
            page.wait_for_function("() => window.__readyAt !== undefined", timeout=90_000)
            ready = page.evaluate("window.__readyAt")
            if kind == "bare":
                bare.append(ready)
            else:
                ready_ms.append(ready)
                fcp.append(page.evaluate(
                    "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN"))
                long_tasks.extend(page.evaluate("window.__longTasks"))
            page.close()
    context.close()
    return {"bare_ms": bare, "lesson_ready_ms": ready_ms, "fcp_ms": fcp, "long_tasks_ms": long_tasks}


def measure_moves(browser, server: Server, moves: int) -> list[float]:
    page = browser.new_page()
    page.goto(server.url(LESSON))
    page.wait_for_selector('#roofline[data-state="ready"]', timeout=90_000)
    page.locator("#roofline").scroll_into_view_if_needed()  # its figure is drawn when it nears the viewport
    page.wait_for_selector('#roofline .js-plotly-plot')
    top = int(page.get_attribute("#roofline-T-slider", "max"))  # the slider's last stop
    latencies = []
    for i in range(moves):
        position = top // 5 + (i * 37) % (top - top // 5)
        latencies.append(page.evaluate(MOVE, position))
    page.close()
    return latencies


def measure_build(runs: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(runs):
            times.append(build.build(build.Paths(out=Path(scratch) / "_site")))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--moves", type=int, default=100)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    build_s = measure_build(args.runs)
    with tempfile.TemporaryDirectory() as scratch:
        site = Path(scratch) / "_site"
        build.build(build.Paths(out=site))
        shutil.copytree(ROOT / "bench" / "bare", site / "bench" / "bare")
        server = Server(site, cache=PAGES_CACHE)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable(), args=ARGS)
            loads = {lesson: measure_load(browser, server, args.runs, lesson) for lesson in LESSONS}
            moves = measure_moves(browser, server, args.moves)
            browser.close()
        server.close()

    rows = [("full build (s)", f"median {statistics.median(build_s):.3f}, best {min(build_s):.3f}", "≤ 3 s")]
    for lesson, load in loads.items():
        ratios = [ready / bare for ready, bare in zip(load["lesson_ready_ms"], load["bare_ms"])]
        rows += [
            (f"{lesson} first contentful paint (ms)", f"median {statistics.median(load['fcp_ms']):.0f}", "< 500 ms"),
            (f"{lesson} bare Pyodide boot (ms)", " ".join(f"{v:.0f}" for v in load["bare_ms"]), ""),
            (f"{lesson} widgets ready (ms)", " ".join(f"{v:.0f}" for v in load["lesson_ready_ms"]), ""),
            (f"{lesson} ready / bare", f"median {statistics.median(ratios):.2f} "
                                       f"({' '.join(f'{r:.2f}' for r in ratios)})", "≤ 1.10"),
            (f"{lesson} longest main-thread task (ms)", f"{max(load['long_tasks_ms'], default=0):.0f}", "≤ 200 ms"),
        ]
    rows.append((f"slider move -> view ({len(moves)} moves, ms)",
                 f"p50 {percentile(moves, 50):.1f}, p95 {percentile(moves, 95):.1f}", "p50 ≤ 17, p95 ≤ 33"))
    width = max(len(r[0]) for r in rows)
    for name, value, budget in rows:
        print(f"{name:<{width}}  {value}  {('[budget ' + budget + ']') if budget else ''}")
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    (results / f"{stamp}.json").write_text(json.dumps({"build_s": build_s, "load": loads, "moves_ms": moves}, indent=1))


if __name__ == "__main__":
    main()
