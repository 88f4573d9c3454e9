#!/usr/bin/env python3
"""Measure the budgets (ARCHITECTURE.md, "Budgets and make bench") and print them. Asserts nothing: timings
belong here, not in tests.

    python bench/run.py [--runs 5] [--moves 100]

- load, in rounds: a bare Pyodide page booting in a module worker (in a new profile, then again in it); a new
  student's first lesson, the next lesson by its link and a reload, each timed from navigation to every widget
  data-state="ready", with the main thread's long tasks (rendering updates included) and the bytes the server
  sent (the worker's downloads and the offline cache included; bodies uncompressed, Pages would gzip the text);
  the same visits in a browser without SharedWorker (each page then restores Python from its snapshot); and the
  time until the widgets say they failed when pyodide.asm.wasm is missing from the server.
- a slow link (SLOW_LINK, paced by the server so that workers' requests pay it too, every file gzip-compressed as
  a static host sends it): a bare Pyodide boot and a new student's first lesson, and the compressed bytes it costs.
- the page's own layout as the floor: the first lesson with every script taken out against it as built, each in a
  new profile: its first contentful paint and its longest first frame (the longest animation frame that starts
  before the load event), and their ratios.
- interaction, once the page has settled: a slider move -> readouts and plot updated (Plotly's afterplot, or
  plotly_animated where the move only moves points), over N moves, split into Python's render, the rest of the
  worker round trip, and the page's own work (DOM writes and Plotly, up to the frame that draws the plot); then N
  moves made at the start of a frame, as a drag makes them, counted in frames until the one that draws the view.
- every widget (bench/widgets.py): each control of each widget of every English lesson moved to several values,
  from the input event until the view answering it is applied and painted, a row per widget (p50, p95, worst); and
  while slo-serving computes, a move of another widget on its page and of one in a second tab.
- build: full site build, best and median of several runs; and one build in a fresh process, as `make serve`, each
  of its rebuilds or a test process pays it (the simulator's caches empty), with the frozen figures and without
  them (as after a change to sim/).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import build  # noqa: E402
from bench import widgets as widget_moves  # noqa: E402
from builder.chromium import ARGS, executable  # noqa: E402
from builder.serve import Link, Server  # noqa: E402

LESSONS = ("prefill-decode/", "inference-vs-training/")
LESSON = LESSONS[0]  # the page whose roofline slider is timed
WASM = "vendor/pyodide/pyodide.asm.wasm"
NO_SHARED_WORKER = "delete window.SharedWorker;"  # a browser where each page has its own worker
PAGES_CACHE = "max-age=600"  # what GitHub Pages sends with every file: repeat visits are timed as students get them
# Records when every widget is ready, and every long main-thread task, from the very start of the page. The Long
# Tasks API sees scripts and parsing (with the layouts they force), not the rendering updates between them, where a
# page's first layouts are: those come from long animation frames, as the time from a frame's renderStart to its end.
INIT_SCRIPT = """
window.__longTasks = [];
new PerformanceObserver(list => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
  .observe({type: 'longtask', buffered: true});
new PerformanceObserver(list => {
  for (const e of list.getEntries()) {
    const render = e.renderStart ? e.startTime + e.duration - e.renderStart : 0;
    if (render > 50) window.__longTasks.push(render);
  }
}).observe({type: 'long-animation-frame', buffered: true});
new MutationObserver(() => {
  const all = [...document.querySelectorAll('[data-widget]')];
  const ready = all.length && all.every(w => w.dataset.state === 'ready');
  if (ready && !window.__readyAt) window.__readyAt = performance.now();
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-state']});
"""
MOVE = """
async ([position, aligned]) => {
  const slider = document.querySelector('#roofline-T-slider');
  const plot = document.querySelector('[data-figure="roofline"]');
  // A move that only moves points is animated (no transition); any other is drawn whole. Both events come from
  // the animation frame that draws the view: document.timeline.currentTime is that frame's time.
  const done = new Promise(resolve => {
    plot.once('plotly_afterplot', () => resolve(document.timeline.currentTime));
    plot.once('plotly_animated', () => resolve(document.timeline.currentTime));
  });
  // aligned: the input comes at the start of a frame, as a drag's does (Chromium sends pointer moves once a frame).
  const frameAt = aligned ? await new Promise(resolve => requestAnimationFrame(resolve)) : null;
  const t0 = performance.now();
  slider.value = String(position);
  slider.dispatchEvent(new Event('input', {bubbles: true}));
  const drawnAt = await done;
  const total = performance.now() - t0;
  const { roundTripMs, pythonMs } = window.inferlab.runtime.lastRender ?? {};  // none in a build before the split
  return [total, roundTripMs, pythonMs, aligned ? drawnAt - frameAt : null];
}
"""
# The time from one animation frame to the next, in the page (ms): the median of a few.
FRAME_INTERVAL = """async () => {
  const times = [];
  for (let i = 0; i < 21; i++) times.push(await new Promise(resolve => requestAnimationFrame(resolve)));
  const gaps = times.slice(1).map((t, i) => t - times[i]).sort((a, b) => a - b);
  return gaps[gaps.length >> 1];
}"""


# Widgets that simulate a stream of requests on every move of their arrival-rate slider, timed from `input` until
# their diagram is replaced: (page, widget, diagram, the highest rate moved to).
TIMELINE = ("kv-cache-serving/", "batching-timeline", "timeline", 7)  # below static batching's capacity
SLO = ("en/pd-disaggregation/", "slo-serving", "bars", 3)  # below chunked prefill's goodput on the chat workload
RATE_MOVE = """
async ([widget, diagram, position]) => {
  const slider = document.querySelector(`#${widget}-rate-slider`);
  const picture = document.querySelector(`#${widget} [data-svg="${diagram}"]`);
  // Every move draws the diagram anew: done when its picture is replaced.
  const done = new Promise(resolve => new MutationObserver((_, observer) => { observer.disconnect(); resolve(); })
    .observe(picture, {childList: true, subtree: true}));
  const t0 = performance.now();
  slider.value = String(position);
  slider.dispatchEvent(new Event('input', {bubbles: true}));
  await done;
  return performance.now() - t0;
}
"""


SLOW_LINK = Link(bits_per_s=10e6, latency_s=0.040)  # a student far from the host: 10 Mbit/s, 40 ms
# Every animation frame of a page, from its start: (start, duration), for the longest first frame.
FRAMES_SCRIPT = """
window.__frames = [];
new PerformanceObserver(list => { for (const e of list.getEntries()) window.__frames.push([e.startTime, e.duration]); })
  .observe({type: 'long-animation-frame', buffered: true});
"""
FIRST_PAINT = """async () => {
  if (document.readyState !== 'complete') await new Promise(resolve => addEventListener('load', resolve));
  await new Promise(resolve => setTimeout(resolve, 1000));
  const load = performance.getEntriesByType('navigation')[0].loadEventStart;
  const first = window.__frames.filter(([start]) => start < load).map(([, duration]) => duration);
  return {fcp_ms: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
          longest_frame_ms: Math.max(0, ...first)};
}"""
SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>|<link\b[^>]*rel=\"modulepreload\"[^>]*>", re.S)


def without_scripts(site: Path, page: str) -> None:
    """The page at `page` in `site` with every script (and script preload) taken out: what its layout alone costs."""
    html = site / page / "index.html"
    html.write_text(SCRIPT.sub("", html.read_text(encoding="utf-8")), encoding="utf-8")


def first_paint(profiles, server: Server) -> dict:
    """A first visit to the first lesson in a new profile, up to its load event: its paint and longest frame."""
    context = profiles.new()
    context.add_init_script(FRAMES_SCRIPT)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(server.url(LESSONS[0]), wait_until="commit")
    painted = page.evaluate(FIRST_PAINT)
    context.close()
    return painted


def measure_floor(profiles, built: Server, floor: Server, runs: int) -> dict:
    """`runs` pairs of first visits, the page without scripts and as built, alternating."""
    pairs = {"floor": [], "built": []}
    for _ in range(runs):
        pairs["floor"].append(first_paint(profiles, floor))
        pairs["built"].append(first_paint(profiles, built))
    return pairs


def slow_visits(profiles, slow: Server, runs: int) -> list[dict]:
    """On the slow link: a bare Pyodide boot and a new student's first lesson (with its compressed bytes)."""
    visits = []
    for _ in range(runs):
        context = profiles.new()
        context.add_init_script(INIT_SCRIPT)
        page = context.pages[0] if context.pages else context.new_page()
        bare = open_lesson(page, slow.url("bench/bare/"))["ready_ms"]
        context.close()
        context = profiles.new()
        context.add_init_script(INIT_SCRIPT)
        page = context.pages[0] if context.pages else context.new_page()
        before = slow.sent_bytes
        first = open_lesson(page, slow.url(LESSONS[0]))
        settle(page, slow)
        visits.append({"bare_ms": bare, "first_ms": first["ready_ms"], "bytes": slow.sent_bytes - before})
        context.close()
    return visits


def lesson_pages(site: Path) -> list[str]:
    """Every lesson with widgets in the default language (a folder at the site's root whose page starts Python)."""
    return sorted(f"{page.parent.name}/" for page in site.glob("*/index.html")
                  if "data-sim-zip=" in page.read_text(encoding="utf-8"))


def first_visit_bytes(profiles, compressed: Server, pages: list[str]) -> dict[str, int]:
    """Each lesson as a new student's first page (a new profile), on a server that compresses as a static host
    does: the bytes it sent until the page's after-work was over (Python's snapshot, the offline copy). The link is
    not paced: the bytes are the same, and sixteen lessons cost a minute, not four."""
    sent = {}
    for url in pages:
        context = profiles.new()
        context.add_init_script(INIT_SCRIPT)
        page = context.pages[0] if context.pages else context.new_page()
        before = compressed.sent_bytes
        open_lesson(page, compressed.url(url))
        settle(page, compressed)
        sent[url] = compressed.sent_bytes - before
        context.close()
    return sent


def first_visit_rows(sent: dict[str, int]) -> list[tuple[str, str, str]]:
    """The lightest and the heaviest lesson's first visit, against the budget that holds for every lesson."""
    light, heavy = min(sent, key=sent.get), max(sent, key=sent.get)
    return [(f"first visit, lightest lesson {light} (KB, gzip-compressed)", f"{sent[light] / 1000:.0f}", "≤ 4000 KB"),
            (f"first visit, heaviest lesson {heavy} (KB, gzip-compressed)", f"{sent[heavy] / 1000:.0f}", "≤ 4000 KB")]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def open_lesson(page, url: str | None) -> dict:
    """Navigate `page` to `url` (None: reload it) and wait until every widget is ready; what the load cost."""
    if url is None:
        page.reload()
    else:
        page.goto(url)
    page.wait_for_function("() => window.__readyAt !== undefined", timeout=90_000)
    return {"ready_ms": page.evaluate("window.__readyAt"), "long_tasks_ms": page.evaluate("window.__longTasks"),
            "fcp_ms": page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN")}


# What a page does once its widgets answer (save Python's snapshot, cache itself for offline reading): a visit's
# bytes are counted once it is done. Pages without either resolve at once.
SETTLED = """async () => {
  const page = window.inferlab ?? {};
  await Promise.all([page.runtime?.settled, page.offline].filter(Boolean));
}"""
QUIET_S = 0.5  # no byte sent for this long: the visit's downloads are over


def settle(page, server: Server, limit_s: float = 30) -> None:
    """Wait until the page's after-work is over and the server has sent nothing for QUIET_S: what the service
    worker fetches after answering (the files it keeps once a student reads on) counts in the visit that asked."""
    page.evaluate(SETTLED)
    deadline = time.monotonic() + limit_s
    sent, since = server.sent_bytes, time.monotonic()
    while time.monotonic() - since < QUIET_S and time.monotonic() < deadline:
        time.sleep(0.1)
        if server.sent_bytes != sent:
            sent, since = server.sent_bytes, time.monotonic()


class Profiles:
    """A new browser profile on disk for each student, as a real one is: HTTP cache, wasm code cache, the origin
    private file system and service workers persist within it (an in-memory incognito profile caches no file as
    large as the wasm)."""

    def __init__(self, playwright, scratch: Path):
        self.playwright = playwright
        self.scratch = scratch
        self.count = 0

    def new(self, **options):
        self.count += 1
        return self.playwright.chromium.launch_persistent_context(
            self.scratch / f"profile-{self.count}", executable_path=executable(), args=ARGS, **options)


def bare_boot(profiles: Profiles, server: Server) -> tuple[float, float]:
    """A bare Pyodide page, in a new profile and then reloaded in it: (cold, warm) ready times."""
    context = profiles.new()
    context.add_init_script(INIT_SCRIPT)
    page = context.pages[0] if context.pages else context.new_page()
    cold = open_lesson(page, server.url("bench/bare/"))["ready_ms"]
    warm = open_lesson(page, None)["ready_ms"]
    context.close()
    return cold, warm


def student_visit(profiles: Profiles, server: Server, shared: bool = True) -> dict:
    """A new student: the first lesson, then the next one by its link, then a reload; each with its bytes."""
    context = profiles.new()
    context.add_init_script(INIT_SCRIPT)
    if not shared:
        context.add_init_script(NO_SHARED_WORKER)
    page = context.pages[0] if context.pages else context.new_page()
    visits = {}
    for name, url in (("first", server.url(LESSONS[0])), ("next", server.url(LESSONS[1])), ("reload", None)):
        before = server.sent_bytes
        visit = open_lesson(page, url)
        settle(page, server)
        visit["bytes"] = server.sent_bytes - before
        visits[name] = visit
    context.close()
    return visits


def time_to_failed(profiles: Profiles, server: Server) -> float:
    """With pyodide.asm.wasm missing (`server` serves a site without it), how long until every widget says it
    failed. (Not a Playwright route: a shared worker's requests pass by them.)"""
    context = profiles.new()
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(server.url(LESSONS[0]))
    page.wait_for_function("() => [...document.querySelectorAll('[data-widget]')]"
                           ".every(w => w.dataset.state === 'failed')", timeout=120_000)
    failed_ms = page.evaluate("performance.now()")
    context.close()
    return failed_ms


def measure_load(profiles: Profiles, server: Server, without_wasm: Server, runs: int) -> dict:
    """`runs` rounds of: a bare Pyodide boot (cold, warm), a student's three visits (with and without
    SharedWorker), a missing wasm."""
    rounds = []
    for i in range(runs):
        print(f"round {i + 1} of {runs}", file=sys.stderr, flush=True)
        cold, warm = bare_boot(profiles, server)
        rounds.append({"bare_cold_ms": cold, "bare_warm_ms": warm, "visits": student_visit(profiles, server),
                       "dedicated_visits": student_visit(profiles, server, shared=False),
                       "failed_ms": time_to_failed(profiles, without_wasm)})
    return rounds


def measure_moves(browser, server: Server, moves: int) -> dict:
    """`moves` moves of the roofline's T slider, each one's [total, worker round trip, Python's render] (ms), once
    the page has settled (Python's snapshot saved, the offline copy made: a boot's after-work, not a move's cost);
    then as many moves made at the start of a frame, each one's frames until the frame that draws it."""
    page = browser.new_page()
    page.goto(server.url(LESSON))
    page.wait_for_selector('#roofline[data-state="ready"]', timeout=90_000)
    page.evaluate(SETTLED)
    page.locator("#roofline").scroll_into_view_if_needed()  # its figure is drawn when it nears the viewport
    page.wait_for_selector('#roofline .js-plotly-plot')
    page.wait_for_selector('#roofline [data-figure]:not([data-drawing])')
    top = int(page.get_attribute("#roofline-T-slider", "max"))  # the slider's last stop
    positions = [top // 5 + (i * 37) % (top - top // 5) for i in range(moves)]
    split = [page.evaluate(MOVE, [position, False])[:3] for position in positions]
    interval = page.evaluate(FRAME_INTERVAL)
    frames = [round(page.evaluate(MOVE, [position, True])[3] / interval) for position in positions]
    page.close()
    return {"split": split, "frames": frames, "frame_interval_ms": interval}


def measure_rate_moves(browser, server: Server, moves: int, which: tuple) -> list[float]:
    """A simulating widget's arrival-rate slider (TIMELINE, SLO): every move runs a stream of requests."""
    path, widget, diagram, highest = which
    page = browser.new_page()
    page.goto(server.url(path))
    page.wait_for_selector(f'#{widget}[data-state="ready"]', timeout=90_000)
    slider = f"#{widget}-rate-slider"
    stops = [float(v) for v in page.get_attribute(slider, "data-stops").split(",")]
    top = max(k for k, rate in enumerate(stops) if rate <= highest)
    latencies = []
    for i in range(moves):
        position = (i * 5) % (top + 1)
        if page.evaluate(f"document.querySelector('{slider}').value") == str(position):
            position += 1  # a move to where it already is redraws nothing
        latencies.append(page.evaluate(RATE_MOVE, [widget, diagram, position]))
    page.close()
    return latencies


def measure_build(runs: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(runs):
            times.append(build.build(build.Paths(out=Path(scratch) / "_site")))
    return times


def measure_fresh_build(frozen: str = "write") -> float:
    """One build in a new Python process, timed from its start to its end: what `make serve`, each of its rebuilds
    and every test process that builds pay, the simulator's caches empty. frozen="none": every figure computed, as
    after a change to sim/ (builder/frozen.py)."""
    with tempfile.TemporaryDirectory() as scratch:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "build.py"), "build", "--out", str(Path(scratch) / "_site"),
                        "--frozen", frozen], check=True, capture_output=True)
        return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--moves", type=int, default=100)
    parser.add_argument("--first-visits", action="store_true",
                        help="only each lesson's first-visit bytes, compressed (about a minute)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    if args.first_visits:
        with tempfile.TemporaryDirectory() as scratch:
            site = Path(scratch) / "_site"
            build.build(build.Paths(out=site))
            compressed = Server(site, cache=PAGES_CACHE, compress=True)
            with sync_playwright() as p:
                sent = first_visit_bytes(Profiles(p, Path(scratch)), compressed, lesson_pages(site))
            compressed.close()
        for url, count in sorted(sent.items(), key=lambda item: item[1]):
            print(f"first visit {url:<28} {count / 1000:7.0f} KB gzip-compressed")
        for name, value, budget in first_visit_rows(sent):
            print(f"{name}  {value}  [budget {budget}]")
        return

    fresh_build_s, unfrozen_build_s = measure_fresh_build(), measure_fresh_build("none")
    build_s = measure_build(args.runs)
    with tempfile.TemporaryDirectory() as scratch:
        site = Path(scratch) / "_site"
        build.build(build.Paths(out=site))
        shutil.copytree(ROOT / "bench" / "bare", site / "bench" / "bare")
        # The bare page is stock Pyodide, with its own full standard library (the site sends a cut one).
        shutil.copy(ROOT / "node_modules" / "pyodide" / "python_stdlib.zip", site / "vendor" / "pyodide")
        server = Server(site, cache=PAGES_CACHE)
        broken = Path(scratch) / "_site_without_wasm"
        shutil.copytree(site, broken, copy_function=os.link)
        (broken / WASM).unlink()
        without_wasm = Server(broken, cache=PAGES_CACHE)
        bare_page = Path(scratch) / "_site_without_scripts"
        shutil.copytree(site, bare_page, copy_function=os.link)
        (bare_page / LESSONS[0] / "index.html").unlink()  # a copy of its own, not the built page's hard link
        shutil.copy(site / LESSONS[0] / "index.html", bare_page / LESSONS[0] / "index.html")
        without_scripts(bare_page, LESSONS[0])
        floor = Server(bare_page, cache=PAGES_CACHE)
        slow = Server(site, cache=PAGES_CACHE, compress=True, link=SLOW_LINK)
        with sync_playwright() as p:
            profiles = Profiles(p, Path(scratch))
            rounds = measure_load(profiles, server, without_wasm, args.runs)
            painted = measure_floor(profiles, server, floor, max(6, 2 * args.runs))  # noisy: more pairs
            slow_rounds = slow_visits(profiles, slow, args.runs)
            compressed = Server(site, cache=PAGES_CACHE, compress=True)
            every_first = first_visit_bytes(profiles, compressed, lesson_pages(site))
            compressed.close()
            browser = p.chromium.launch(executable_path=executable(), args=ARGS)
            slider = measure_moves(browser, server, args.moves)
            split = slider["split"]  # [total, round trip, Python] per move
            moves = [total for total, _, _ in split]
            timeline_moves = measure_rate_moves(browser, server, max(10, args.moves // 5), TIMELINE)
            slo_moves = measure_rate_moves(browser, server, max(10, args.moves // 5), SLO)
            browser.close()
            every_widget = widget_moves.rows(site, p)
        for running in (server, without_wasm, floor, slow):
            running.close()

    def each(values, digits=0):
        return " ".join(f"{v:.{digits}f}" for v in values)

    def p50_of(parts):
        """A part of the slider's split; a build without runtime.lastRender (one to compare) has none."""
        try:
            return f"{percentile(parts(), 50):.1f}"
        except TypeError:
            return "n/a"

    def median_of(values, digits=2):
        return f"median {statistics.median(values):.{digits}f} ({each(values, digits)})"

    cold = [r["bare_cold_ms"] for r in rounds]
    warm = [r["bare_warm_ms"] for r in rounds]
    visits = {name: [r["visits"][name] for r in rounds] for name in ("first", "next", "reload")}
    ready = {name: [v["ready_ms"] for v in vs] for name, vs in visits.items()}
    restored = {name: [r["dedicated_visits"][name]["ready_ms"] for r in rounds] for name in ("next", "reload")}
    rows = [
        ("full build (s)", f"median {statistics.median(build_s):.3f}, best {min(build_s):.3f}", "≤ 3 s"),
        ("first build in a fresh process (s)", f"{fresh_build_s:.1f}", "≤ 5 s"),
        ("first build in a fresh process, every figure computed (s)", f"{unfrozen_build_s:.1f}", ""),
        ("bare Pyodide boot, new profile (ms)", each(cold), ""),
        ("bare Pyodide boot, same profile again (ms)", each(warm), ""),
        (f"{LESSONS[0]} first contentful paint (ms)",
         f"median {statistics.median(v['fcp_ms'] for v in visits['first']):.0f}", "< 500 ms"),
        (f"first visit {LESSONS[0]} widgets ready (ms)", each(ready["first"]), ""),
        ("first visit ready / bare (new profile)", median_of([a / b for a, b in zip(ready["first"], cold)]), "≤ 1.10"),
        # A first visit's frames are weighed against the page's own layout (the floor rows below), not 200 ms.
        ("first visit longest main-thread task (ms)",
         each([max(v["long_tasks_ms"], default=0) for v in visits["first"]]), ""),
        (f"next lesson {LESSONS[1]} widgets ready (ms)", each(ready["next"]), ""),
        ("next lesson ready / bare (same profile)", median_of([a / b for a, b in zip(ready["next"], warm)]), "≤ 0.30"),
        ("reload widgets ready (ms)", each(ready["reload"]), ""),
        ("reload ready / bare (same profile)", median_of([a / b for a, b in zip(ready["reload"], warm)]), ""),
        ("later visits longest main-thread task (ms)",
         each([max(v["long_tasks_ms"] + w["long_tasks_ms"], default=0)
               for v, w in zip(visits["next"], visits["reload"])]), "≤ 200 ms"),
        ("no SharedWorker: next lesson ready, restored (ms)", each(restored["next"]), ""),
        ("no SharedWorker: next lesson ready / bare", median_of([a / b for a, b in zip(restored["next"], warm)]), ""),
        ("no SharedWorker: reload ready, restored (ms)", each(restored["reload"]), ""),
    ]
    for name in ("first", "next", "reload"):
        kilobytes = [v["bytes"] / 1000 for v in visits[name]]
        rows.append((f"bytes sent, {name} visit (KB, uncompressed)", each(kilobytes), ""))
    link = f"{SLOW_LINK.bits_per_s / 1e6:g} Mbit/s, {SLOW_LINK.latency_s * 1e3:g} ms"
    slow_bare = [v["bare_ms"] for v in slow_rounds]
    slow_first = [v["first_ms"] for v in slow_rounds]
    floor_fcp, built_fcp = ([v["fcp_ms"] for v in painted[k]] for k in ("floor", "built"))
    floor_frame, built_frame = ([v["longest_frame_ms"] for v in painted[k]] for k in ("floor", "built"))
    rows += [
        ("bytes sent, first visit (KB, gzip-compressed)", each([v["bytes"] / 1000 for v in slow_rounds]), "≤ 4500 KB"),
        *first_visit_rows(every_first),
        (f"bare Pyodide boot, {link}, new profile (ms)", each(slow_bare), ""),
        (f"first visit widgets ready, {link} (ms)", each(slow_first), ""),
        ("first visit ready / bare on that link", median_of([a / b for a, b in zip(slow_first, slow_bare)]),
         "≤ 0.85"),
        (f"{LESSONS[0]} without scripts (the floor): first contentful paint (ms)", each(floor_fcp), ""),
        (f"{LESSONS[0]} as built: first contentful paint (ms)", each(built_fcp), ""),
        ("first contentful paint, built / floor", median_of([a / b for a, b in zip(built_fcp, floor_fcp)]),
         "≤ 1.10"),
        (f"{LESSONS[0]} without scripts (the floor): longest first frame (ms)", each(floor_frame), ""),
        (f"{LESSONS[0]} as built: longest first frame (ms)", each(built_frame), ""),
        ("longest first frame, built / floor",
         median_of([a / b if b else float("nan") for a, b in zip(built_frame, floor_frame)]), "≤ 1.10"),
    ]
    rows += [
        ("time to 'failed', pyodide.asm.wasm missing (ms)", each([r["failed_ms"] for r in rounds]), "≤ 5000 ms"),
        (f"slider move -> view ({len(moves)} moves, ms)",
         f"p50 {percentile(moves, 50):.1f}, p95 {percentile(moves, 95):.1f}", "p50 ≤ 17, p95 ≤ 33"),
        ("  of which: Python's render (p50, ms)", p50_of(lambda: [s[2] for s in split]), ""),
        ("  of which: to the worker and back, besides Python (p50, ms)",
         p50_of(lambda: [s[1] - s[2] for s in split]), ""),
        ("  of which: the page's DOM writes and Plotly (p50, ms)", p50_of(lambda: [s[0] - s[1] for s in split]), ""),
        (f"slider move at a frame's start, as a drag sends it: drawn in the next frame "
         f"(a frame is {slider['frame_interval_ms']:.1f} ms)",
         f"{sum(f <= 1 for f in slider['frames'])} of {len(slider['frames'])} moves; the slowest in "
         f"{max(slider['frames'])}", ""),
        (f"batching-timeline rate move -> view ({len(timeline_moves)} moves, ms)",
         f"p50 {percentile(timeline_moves, 50):.1f}, p95 {percentile(timeline_moves, 95):.1f}", ""),
        (f"slo-serving rate move -> view ({len(slo_moves)} moves, ms)",
         f"p50 {percentile(slo_moves, 50):.1f}, p95 {percentile(slo_moves, 95):.1f}", ""),
    ]
    rows += every_widget
    width = max(len(r[0]) for r in rows)
    for name, value, budget in rows:
        print(f"{name:<{width}}  {value}  {('[budget ' + budget + ']') if budget else ''}")
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    record = {"build_s": build_s, "rounds": rounds, "moves_ms": split, "move_frames": slider["frames"],
              "first_paint": painted, "slow_link": slow_rounds, "first_visit_bytes": every_first}
    (results / f"{stamp}.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
