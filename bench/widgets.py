"""Every widget's moves, timed in the page: for each lesson, each widget, each of its controls, moves to several
values (a slider to five positions along it, a menu or a row of buttons to each of its options), then back; each
from the input event until the view answering it is applied and the next frame is painted. And while a slow widget
computes, how long another widget of the page, and one in a second tab, take to answer. And the first plot of
each page: the longest main-thread task around it (`--first-plots` measures only that).

Used by bench/run.py (a row per widget); `python bench/widgets.py --site DIR` measures a site already built (a
commit before, say) with the same moves.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from builder.chromium import ARGS, executable  # noqa: E402
from builder.serve import Server  # noqa: E402
from sim.serving.scheduler import percentile  # noqa: E402 (interpolated between order statistics)

SLIDER_FRACTIONS = (0.1, 0.3, 0.5, 0.7, 0.9)
MOVE_LIMIT_MS = 60_000

# The moves a student can make with a widget's controls, as [control, kind, value] (kind: range | select | radio),
# each to a value other than the one before it, ending where it began. Free number boxes (a question's guess) are
# left out: they answer a typed value, not a move.
MOVES = """([id, fractions]) => {
  const section = document.getElementById(id);
  const moves = [];
  for (const slider of section.querySelectorAll('.controls input[type="range"]')) {
    const max = Number(slider.max), min = Number(slider.min), start = Number(slider.value);
    const positions = fractions.map(f => Math.round(min + f * (max - min))).filter(p => p !== start);
    for (const p of [...new Set(positions), start]) moves.push([slider.id, "range", String(p)]);
  }
  for (const select of section.querySelectorAll('.controls select')) {
    const start = select.value;
    for (const option of select.options) if (option.value !== start) moves.push([select.name, "select", option.value]);
    moves.push([select.name, "select", start]);
  }
  const groups = new Map();
  for (const radio of section.querySelectorAll('.controls input[type="radio"]')) {
    if (!groups.has(radio.name)) groups.set(radio.name, []);
    groups.get(radio.name).push(radio);
  }
  for (const [name, radios] of groups) {
    const start = radios.find(r => r.checked)?.value;
    for (const r of radios) if (r.value !== start) moves.push([name, "radio", r.value]);
    if (start !== undefined) moves.push([name, "radio", start]);
  }
  return moves;
}"""

# One move: from the input event until the widget applies a view with no newer state waiting, and the frame after it
# is painted (a task after the frame's rendering). Milliseconds, or null if no view came within the limit.
MOVE = """async ([id, [control, kind, value], limit]) => {
  const section = document.getElementById(id);
  const widget = window.inferlab.widgets.find(w => w.id === id);
  const apply = widget.apply;
  const applied = new Promise(resolve => {
    widget.apply = function (view, source) {
      apply.call(this, view, source);
      if (!this.queued) resolve(true);
    };
  });
  const timeout = new Promise(resolve => setTimeout(() => resolve(false), limit));
  const t0 = performance.now();
  if (kind === "range") {
    const slider = document.getElementById(control);
    slider.value = value;
    slider.dispatchEvent(new Event("input", {bubbles: true}));
  } else if (kind === "select") {
    const select = section.querySelector(`.controls select[name="${control}"]`);
    select.value = value;
    select.dispatchEvent(new Event("change", {bubbles: true}));
  } else {
    const radio = section.querySelector(`input[type="radio"][name="${control}"][value="${value}"]`);
    radio.checked = true;
    radio.dispatchEvent(new Event("change", {bubbles: true}));
  }
  const answered = await Promise.race([applied, timeout]);
  widget.apply = apply;
  if (!answered) return null;
  await new Promise(resolve => requestAnimationFrame(() => setTimeout(resolve)));
  const total = performance.now() - t0;
  // Python's part of the last render: the runtime that answered it (a slow widget's own, once it is ready)
  const slow = widget.slow ? window.inferlab.slowRuntime : null;
  const runtime = slow && slow.status === "ready" ? slow : window.inferlab.runtime;
  return [total, runtime.lastRender?.pythonMs ?? null];
}"""

SETTLED = "async () => { await window.inferlab.runtime.settled; }"
# A slow widget's worker starts as the widget nears the screen: scrolled to, it is waited for (a build before slow
# widgets has none).
SLOW_READY = """async () => {
  const slow = window.inferlab.slowRuntime;
  const until = performance.now() + 60000;
  if (slow) await new Promise(resolve => {
    const check = () => (slow.status === "ready" || slow.status === "failed" || performance.now() > until)
      ? resolve() : setTimeout(check, 50);
    check();
  });
  return slow ? slow.status : null;
}"""
ALL_READY = """() => {
  const all = [...document.querySelectorAll('[data-widget]')];
  return all.length > 0 && all.every(w => w.dataset.state === 'ready') && window.inferlab !== undefined;
}"""


def lessons(site: Path, lang: str = "en") -> list[str]:
    """The lesson pages of one language in the built site (their paths, in the course's order of folders)."""
    base = site / lang if lang else site
    return sorted(f"{lang}/{p.parent.name}/" for p in base.glob("*/index.html")
                  if 'data-widget="' in p.read_text(encoding="utf-8"))


def open_settled(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function(ALL_READY, timeout=90_000)
    page.evaluate(SETTLED)


def measure_widgets(context, server: Server, pages: list[str]) -> dict[str, list]:
    """For each widget (by name; a widget on several pages pools its moves), every move's [total, Python's render]
    in milliseconds (None where no view came)."""
    timings: dict[str, list] = {}
    page = context.new_page()
    for path in pages:
        open_settled(page, server.url(path))
        print(f"  {path}", file=sys.stderr, flush=True)
        for section in page.evaluate("[...document.querySelectorAll('[data-widget]')].map(s => [s.id, "
                                     "s.dataset.widget])"):
            widget_id, name = section
            if page.evaluate(f"!!document.querySelector('#{widget_id} .predict-answer')"):
                continue  # a question: answered by a typed guess, not a move
            page.locator(f"#{widget_id}").scroll_into_view_if_needed()
            page.evaluate(SLOW_READY)
            for move in page.evaluate(MOVES, [widget_id, list(SLIDER_FRACTIONS)]):
                timings.setdefault(name, []).append(page.evaluate(MOVE, [widget_id, move, MOVE_LIMIT_MS]))
    page.close()
    return timings


# While slo-serving computes a goodput search of its own, one move of prefill-interference on its page and one of
# the roofline's slider in a second tab of the same browser (sharing its workers), each timed as above.
SLOW_PAGE, SLOW_WIDGET, QUICK_WIDGET = "en/pd-disaggregation/", "slo-serving", "prefill-interference"
OTHER_TAB, OTHER_WIDGET = "en/prefill-decode/", "roofline"
# A slow move: slo-serving's workload and hardware set to a pair not asked for before, so that it computes.
START_SLOW = """([id, workload, hardware]) => {
  const section = document.getElementById(id);
  const select = section.querySelector('.controls select[name="hardware"]');
  select.value = hardware;
  select.dispatchEvent(new Event("change", {bubbles: true}));
  const radio = section.querySelector(`input[type="radio"][data-name="workload"][value="${workload}"]`);
  radio.checked = true;
  radio.dispatchEvent(new Event("change", {bubbles: true}));
}"""
WORKLOADS = ("code", "summarisation", "distserve", "chat")


def measure_meanwhile(context, server: Server) -> dict[str, list]:
    slow_page, other = context.new_page(), context.new_page()
    open_settled(slow_page, server.url(SLOW_PAGE))
    slow_page.locator(f"#{SLOW_WIDGET}").scroll_into_view_if_needed()
    slow_page.evaluate(SLOW_READY)
    open_settled(other, server.url(OTHER_TAB))
    quick_moves = slow_page.evaluate(MOVES, [QUICK_WIDGET, list(SLIDER_FRACTIONS)])
    other_moves = other.evaluate(MOVES, [OTHER_WIDGET, list(SLIDER_FRACTIONS)])
    hardware = slow_page.evaluate(f"[...document.querySelectorAll('#{SLOW_WIDGET} select[name=hardware] option')]"
                                  ".map(o => o.value)")
    out: dict[str, list] = {"same page": [], "second tab": []}
    # The tab timed is brought to the front: a hidden one gets no animation frames, and a move is timed to its paint.
    for k, (gpu, workload) in enumerate((g, w) for g in hardware for w in WORKLOADS):
        slow_page.bring_to_front()
        slow_page.evaluate(START_SLOW, [SLOW_WIDGET, workload, gpu])
        slow_page.wait_for_timeout(30)  # the slow render is under way
        if k % 2 == 0:
            out["same page"].append(slow_page.evaluate(MOVE, [QUICK_WIDGET, quick_moves[k % len(quick_moves)],
                                                              MOVE_LIMIT_MS]))
        else:
            other.bring_to_front()
            out["second tab"].append(other.evaluate(MOVE, [OTHER_WIDGET, other_moves[k % len(other_moves)],
                                                           MOVE_LIMIT_MS]))
        slow_page.wait_for_function(f"() => !window.inferlab.widgets.find(w => w.id === '{SLOW_WIDGET}').inFlight",
                                    timeout=MOVE_LIMIT_MS)
    slow_page.close()
    other.close()
    return out


# The first plot of a page, in a new browser profile (plotly.js never evaluated there): a reader stops two and a third
# screens above the first widget with a figure (within two screens, plotly.js may be prepared; beyond 600 px, no
# figure is drawn), reads for three seconds, then goes to it. The longest main-thread task while getting there and
# reading, and from going to the figure until its plot is drawn (and 300 ms after), in ms.
LONG_TASKS = """window.__longTasks = [];
new PerformanceObserver(list => {
  for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.duration]);
}).observe({type: 'longtask', buffered: true});"""
FIRST_PLOT = """async () => {
  const figure = document.querySelector('[data-figure]');
  const widget = figure.closest('[data-widget]');
  const longest = (from, to) => Math.max(0, ...window.__longTasks
    .filter(([start, length]) => start + length > from && start < to).map(([, length]) => length));
  const reading = performance.now();
  for (let i = 0; i < 3; i++) {  // parts laid out as they near the screen move what is below them
    scrollBy(0, widget.getBoundingClientRect().top - innerHeight * 2.33);
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  await new Promise(resolve => setTimeout(resolve, 3000));
  const going = performance.now();
  widget.scrollIntoView();
  while (!figure.querySelector('.main-svg') || figure.hasAttribute('data-drawing')) {
    await new Promise(resolve => setTimeout(resolve, 10));
  }
  const drawn = performance.now();
  await new Promise(resolve => setTimeout(resolve, 300));
  return {reading: longest(reading, going), drawing: longest(going, drawn + 300), drawn: drawn - going};
}"""


def measure_first_plots(browser, server: Server, pages: list[str]) -> list[dict]:
    out = []
    for path in pages:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.add_init_script(LONG_TASKS)
        open_settled(page, server.url(path))
        if page.evaluate("!!document.querySelector('[data-figure]')"):
            out.append({"page": path, **page.evaluate(FIRST_PLOT)})
        context.close()
    return out


def summary(values: list) -> str:
    """p50, p95 and worst of the moves answered, Python's part of them (p50 and worst), and how many were not."""
    done = [v for v in values if v is not None]
    missing = len(values) - len(done)
    if not done:
        return f"no answer in {len(values)} moves"
    totals = sorted(total for total, _ in done)
    python = sorted(ms for _, ms in done if ms is not None)
    text = (f"p50 {percentile(totals, 50):.0f}, p95 {percentile(totals, 95):.0f}, worst {totals[-1]:.0f} "
            f"({len(done)} moves)")
    if python:
        text += f"; Python p50 {percentile(python, 50):.0f}, worst {python[-1]:.0f}"
    return text + (f", {missing} unanswered in {MOVE_LIMIT_MS / 1000:.0f} s" if missing else "")


def rows(site: Path, playwright, only: list[str] | None = None) -> list[tuple[str, str, str]]:
    """The bench rows: one per widget (of the lessons whose slugs are in `only`, if given), then the two 'meanwhile'
    rows."""
    server = Server(site)
    browser = playwright.chromium.launch(executable_path=executable(), args=ARGS)
    try:
        context = browser.new_context()
        pages = [p for p in lessons(site) if only is None or p.split("/")[1] in only]
        per_widget = measure_widgets(context, server, pages)
        meanwhile = measure_meanwhile(context, server)
        context.close()
        first_plots = measure_first_plots(browser, server, pages)
    finally:
        browser.close()
        server.close()
    out = [(f"widget {name}: move -> view painted (ms)", summary(values), "p50 ≤ 30, p95 ≤ 100")
           for name, values in sorted(per_widget.items())]
    out += [(f"while {SLOW_WIDGET} computes: {QUICK_WIDGET} on its page (ms)", summary(meanwhile["same page"]),
             "≤ 150"),
            (f"while {SLOW_WIDGET} computes: {OTHER_WIDGET} in a second tab (ms)", summary(meanwhile["second tab"]),
             "≤ 150")]
    return out + first_plot_rows(first_plots)


def first_plot_rows(first_plots: list[dict]) -> list[tuple[str, str, str]]:
    def longest(key: str) -> str:
        return " ".join(f"{p[key]:.0f}" for p in first_plots)
    names = " ".join(p["page"].split("/")[1] for p in first_plots)
    return [(f"first plot of a page, longest task from going there until drawn (ms; {names})", longest("drawing"),
             "≤ 200 each"),
            ("first plot of a page, longest task while stopping and reading before it (ms; plotly.js prepared)",
             longest("reading"), "")]


def first_plots_only(site: Path, playwright, only: list[str] | None = None) -> list[tuple[str, str, str]]:
    server = Server(site)
    browser = playwright.chromium.launch(executable_path=executable(), args=ARGS)
    try:
        return first_plot_rows(measure_first_plots(browser, server, [
            p for p in lessons(site) if only is None or p.split("/")[1] in only]))
    finally:
        browser.close()
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, required=True, help="a built site (build.py build)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--lesson", action="append", help="only this lesson's widgets (a slug; may be repeated)")
    parser.add_argument("--first-plots", action="store_true", help="only the first plot of each page")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        found = (first_plots_only if args.first_plots else rows)(args.site, p, args.lesson)
    width = max(len(r[0]) for r in found)
    for name, value, budget in found:
        print(f"{name:<{width}}  {value}  [budget {budget}]", flush=True)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
