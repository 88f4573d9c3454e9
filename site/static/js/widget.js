// One widget on the page: its pre-rendered view, its controls, and its conversation with Python.
// Only the newest state is ever computed: while a request is out, later moves replace each other.
import { withColours } from "./colours.js";
import { Controls } from "./controls.js";
import { ReadoutDock } from "./dock.js";
import { Unreachable } from "./offline.js";
import { fill, TEXT } from "./text.js";
import { readUrlState } from "./urlstate.js";

// A render that takes longer than this is shown as under way: the readouts fade and the head says "computing…".
const BUSY_MS = 100;
const PLOT_CONFIG = { displayModeBar: false, responsive: true };
// Points moved at once, without a transition and without redrawing what did not change.
const MOVE_POINTS = { transition: { duration: 0 }, frame: { duration: 0, redraw: false }, mode: "immediate" };

const nextTask = () => new Promise((resolve) => setTimeout(resolve));

function sameValues(a, b) {
  return a === b || (Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => v === b[i]));
}

// A plot as drawn, taken before Plotly writes its defaults into the figure: everything but where the points are
// (its layout, labels, styles, colours, the number of points of each trace), where they are, and which traces
// Plotly can move without drawing them again (scatter traces without a fill).
function drawing(figure) {
  const shape = JSON.stringify([figure.layout, figure.data.map(({ x, y, ...rest }) => [rest, x?.length, y?.length])]);
  return {
    shape,
    points: figure.data.map(({ x, y }) => [x, y]),
    movable: figure.data.map((trace) => (trace.type ?? "scatter") === "scatter" && (trace.fill ?? "none") === "none"),
  };
}

// The traces whose points moved from one drawing to the next when nothing else changed, and Plotly can move them
// all; null otherwise.
function pointsMoved(before, after) {
  if (!before || before.shape !== after.shape) return null;
  const moved = after.points.flatMap(([x, y], i) =>
    sameValues(x, before.points[i][0]) && sameValues(y, before.points[i][1]) ? [] : [i]);
  return moved.every((i) => after.movable[i]) ? moved : null;
}

export class Widget {
  constructor(section, runtime, page) {
    this.section = section;
    this.runtime = runtime;
    this.page = page;
    this.id = section.id;
    const data = JSON.parse(section.querySelector("script.widget-data").textContent);
    this.name = data.widget;
    this.slow = Boolean(data.slow); // its renders go to the page's slow worker once that is ready (page.js)
    this.view = data.view; // the newest view shown: pre-rendered until Python answers
    this.markup = new Map(Object.entries(data.view.svg)); // each diagram's markup now on the page
    this.plots = new Map(); // for each plot: {drawn: its drawing(), next: the draw waiting, busy}
    this.initial = data.state;
    this.paramNames = Object.keys(data.state).filter((name) => name !== "lang");
    this.state = { ...data.state };
    this.inFlight = false;
    this.queued = null; // {state, source} waiting for the request in flight
    this.text = TEXT.status;
    this.statusText = section.querySelector(".status-text");
    this.retryButton = section.querySelector(".retry");
    this.retryButton.addEventListener("click", () => this.runtime.start());
    this.controls = new Controls(section, (fragment, source) => this.change(fragment, source));
    this.dock = new ReadoutDock(section); // on a phone, the readouts a move changed, in sight while it is made
    this.copyButton = section.querySelector("[data-copy-link]");
    if (this.copyButton) {
      this.copyButton.hidden = false;
      this.copyButton.addEventListener("click", () => this.copyLink());
    }

    // Pre-rendered figures are drawn when the widget nears the viewport, not while the page opens (Plotly's
    // first drawing would compete with Python's boot for the CPU). plotly.js (0.13-0.2 s to evaluate) is loaded
    // earlier still, in an idle moment once Python has settled and a figure is two screens away, so that its
    // evaluation and the first drawing are never one long task.
    if (Object.keys(data.view.figures).length > 0) {
      const observer = new IntersectionObserver((entries) => {
        if (!entries.some((entry) => entry.isIntersecting)) return;
        observer.disconnect();
        this.drawFigures(this.view);
      }, { rootMargin: "600px 0px" });
      observer.observe(section);
      this.page.preparePlotly(this);
    }
    const fromUrl = readUrlState(this.id, this.paramNames);
    if (Object.keys(fromUrl).length > 0) {
      this.controls.show(fromUrl);
      this.change(fromUrl, null);
    }
    runtime.onStatus((status, detail) => this.runtimeStatus(status, detail));
    // Plots are drawn in the theme's colours: a new theme draws the ones already on the page again. Paper
    // shows every plot, so printing draws those not yet seen.
    document.addEventListener("themechange", () => {
      if (this.figuresDrawn || matchMedia("print").matches) this.drawFigures(this.view);
    });
    window.addEventListener("beforeprint", () => this.drawFigures(this.view, { whole: true }));
  }

  runtimeStatus(status, detail) {
    this.section.dataset.state = status;
    this.controls.setEnabled(status !== "failed");
    this.retryButton.hidden = status !== "failed";
    this.statusText.parentElement.hidden = status === "ready";
    if (status === "loading") {
      this.statusText.textContent = this.pending ? this.text.pending : this.text[detail] ?? this.text.python;
    }
    if (status === "failed") this.statusText.textContent = `${this.text.failed} (${detail})`;
    if (status === "ready" && this.queued) this.send(this.queued.state, this.queued.source);
  }

  // A change made before Python answers is kept (the newest one) and sent once it is ready; meanwhile the readouts
  // are marked as not yet showing it, and the status line says so.
  get pending() {
    return this.section.hasAttribute("data-pending");
  }

  set pending(on) {
    this.section.toggleAttribute("data-pending", on);
    this.markOutputs();
    if (on && this.runtime.status === "loading") this.statusText.textContent = this.text.pending;
  }

  // A render under way for more than BUSY_MS: the readouts are marked as not yet showing the newest settings.
  get busy() {
    return this.section.hasAttribute("data-busy");
  }

  set busy(on) {
    if (on === this.busy) return;
    this.section.toggleAttribute("data-busy", on);
    this.markOutputs();
  }

  markOutputs() {
    const on = this.pending || this.busy;
    for (const output of this.section.querySelectorAll("output")) output.toggleAttribute("aria-busy", on);
  }

  // A scenario link's settings (text, as in the URL) over the lesson's own: Python coerces them, as URL state.
  openScenario(values) {
    const state = { ...this.initial, ...values };
    delete state.lang;
    this.controls.show(state);
    this.change(state, null);
  }

  change(fragment, source) {
    this.state = { ...this.state, ...fragment };
    // Python may adjust dependent parameters around the one just changed (changed_param in controls.py).
    const names = Object.keys(fragment);
    const state = names.length === 1 ? { ...this.state, changed: names[0] } : { ...this.state };
    if (this.inFlight || this.runtime.status !== "ready") {
      this.queued = { state, source };
      if (this.runtime.status !== "ready") this.pending = true;
    } else this.send(state, source);
  }

  async send(state, source) {
    this.queued = null;
    this.inFlight = true;
    clearTimeout(this.busyTimer);
    this.busyTimer = setTimeout(() => { this.busy = true; }, BUSY_MS);
    try {
      const view = await this.renderNow(state);
      this.apply(view, source);
    } catch (error) {
      if (this.runtime.status === "ready") this.showError(error);
    } finally {
      clearTimeout(this.busyTimer);
      this.inFlight = false;
    }
    if (this.queued && this.runtime.status === "ready") this.send(this.queued.state, this.queued.source);
    else this.busy = false;
  }

  // A slow widget's render goes to the page's slow worker once it is ready; if that worker fails meanwhile, the
  // first one answers. Every other render goes to the first.
  async renderNow(state) {
    const slow = this.slow ? this.page.slowRuntime : null;
    if (slow?.status === "ready") {
      try {
        return await slow.render(this.name, state);
      } catch (error) {
        if (slow.status === "ready") throw error; // the render itself failed, not the worker
      }
    }
    return this.runtime.render(this.name, state);
  }

  apply(view, source) {
    this.view = view;
    // Figures first: Plotly measures text, which forces a layout; before this view's DOM writes, that
    // layout is nearly free, after them it re-lays the whole page.
    this.drawFigures(view);
    // Python returns the state it actually used (bad values replaced); the page adopts it.
    if (!this.queued) {
      this.state = { ...view.state };
      this.controls.show(view.state, source === document.activeElement ? source : null);
    }
    const changed = new Set(); // the outputs this view rewrote
    for (const [name, { value, text }] of Object.entries(view.outputs)) {
      for (const output of this.section.querySelectorAll(`output[name="${name}"]`)) {
        if (output.dataset.value === String(value) && output.textContent === text) continue;
        output.dataset.value = String(value);
        output.textContent = text;
        changed.add(output);
      }
    }
    // A name may stand in more than one place (a layout or a template that repeats it): every copy follows.
    for (const [name, text] of Object.entries(view.derivations ?? {})) {
      for (const element of this.section.querySelectorAll(`[data-derivation="${name}"]`)) {
        if (element.textContent !== text) element.textContent = text;
      }
    }
    for (const [name, on] of Object.entries(view.flags)) {
      for (const element of this.section.querySelectorAll(`[data-flag="${name}"]`)) element.hidden = !on;
    }
    // A note naming controls that do not apply while it is shown marks them, and they point to it (kit Flag.controls).
    for (const note of this.section.querySelectorAll("[data-inert-controls]")) {
      for (const name of note.dataset.inertControls.split(" ")) {
        const control = this.section.querySelector(`[data-param="${name}"]`);
        if (control) markInert(control, note.hidden ? null : note.id);
      }
    }
    for (const [id, markup] of Object.entries(view.svg)) {
      // Re-parsing a diagram costs more than comparing its markup; most moves leave some unchanged.
      const element = this.section.querySelector(`[data-svg="${id}"]`);
      if (element && this.markup.get(id) !== markup) {
        element.innerHTML = markup; // produced by sim/ from validated state only
        this.markup.set(id, markup);
      }
    }
    this.statusText.parentElement.hidden = true;
    if (this.pending && !this.queued) this.pending = false;
    this.dock.viewApplied(changed, source);
    if (source) this.announceSoon();
    this.page.viewApplied(this, view, source);
  }

  async drawFigures(view, { whole = false } = {}) {
    if (Object.keys(view.figures).length === 0) return;
    this.figuresAsked = true; // no rehearsal is needed once a real drawing is under way
    if (typeof window.Plotly === "undefined") {
      try {
        await this.page.plotly();
      } catch (error) {
        console.warn(`inferlab: plotly.js could not load: ${error.message}`);
        // Offline, before plotly.js was kept: each figure says so, with what it would show.
        if (error instanceof Unreachable) {
          for (const [id, figure] of Object.entries(view.figures)) {
            const element = this.section.querySelector(`[data-figure="${id}"]`);
            if (element) element.dataset.unavailable = fill(TEXT.widget.figure_offline, { alt: figure.alt ?? "" });
          }
        }
        return;
      }
      // plotly.js was evaluated in the task that loaded it: the drawing comes a task later.
      await nextTask();
      if (view !== this.view) return; // a newer view arrived while plotly.js was loading
    }
    for (const [id, figure] of Object.entries(view.figures)) {
      const element = this.section.querySelector(`[data-figure="${id}"]`);
      // A copy in concrete colours: plotly.js writes defaults into what it is given, and the view keeps
      // Python's figure untouched.
      if (!element) continue;
      if (figure.alt && element.getAttribute("aria-label") !== figure.alt) element.setAttribute("aria-label", figure.alt);
      delete element.dataset.unavailable;
      const plot = this.plots.get(id) ?? { drawn: null, next: null, busy: false };
      this.plots.set(id, plot);
      plot.next = { element, data: withColours(figure.data), layout: withColours(figure.layout), whole };
      if (!plot.busy) this.drawPlot(plot);
    }
    this.figuresDrawn = true;
  }

  // Plotly's first drawing on a page costs about half as much again as a later one (its code compiled, its styles
  // and text measures set up): a rehearsal of this widget's first figure, drawn off-screen and thrown away in an
  // idle moment before any plot is needed, pays that in a task of its own.
  async rehearse() {
    const [figure] = Object.values(this.view.figures);
    const stage = document.createElement("div");
    stage.setAttribute("aria-hidden", "true");
    stage.style.cssText = `position: fixed; left: -10000px; top: 0; width: ${this.section.clientWidth || 600}px`;
    document.body.append(stage);
    try {
      await window.Plotly.newPlot(stage, withColours(figure.data), withColours(figure.layout), PLOT_CONFIG);
    } catch {
      // a rehearsal that fails costs the real drawing nothing
    } finally {
      window.Plotly.purge(stage);
      stage.remove();
    }
  }

  // A move that only moves points (most slider moves) has Plotly move them (Plotly.animate, no transition): about
  // half the time of Plotly.react, which draws the axes, legend and margins again. Anything else is drawn whole.
  // An animation lands on the next frame: draws of one plot take turns, so that an older one never lands after a
  // newer one, and while one is under way only the newest waiting is kept. data-drawing is on the plot's element
  // until it shows the newest view (the tests wait for that).
  async drawPlot(plot) {
    plot.busy = true;
    const element = plot.next.element;
    element.dataset.drawing = "";
    // A plot's first drawing (0.1-0.16 s) is a task of its own: a widget's figures do not add up to one long task.
    if (!element._fullLayout) await nextTask();
    while (plot.next) {
      const { data, layout, whole } = plot.next;
      plot.next = null;
      const now = drawing({ data, layout });
      const moved = whole || !element._fullLayout ? null : pointsMoved(plot.drawn, now);
      plot.drawn = now;
      try {
        if (moved === null) await window.Plotly.react(element, data, layout, PLOT_CONFIG);
        else if (moved.length > 0) {
          const points = moved.map((i) => ({ x: data[i].x, y: data[i].y }));
          await window.Plotly.animate(element, { data: points, traces: moved }, MOVE_POINTS);
        }
      } catch (error) {
        plot.drawn = null; // drawn whole next time
        console.warn(`inferlab: ${this.id}: a plot was not drawn (${error?.message ?? error})`);
      }
    }
    plot.busy = false;
    delete element.dataset.drawing;
  }

  // What the student changed, said once: the readouts as they stand a moment after the input settles, not every
  // step of a drag (the outputs themselves are not live regions).
  announceSoon() {
    clearTimeout(this.announceTimer);
    this.announceTimer = setTimeout(() => {
      const said = [...this.section.querySelectorAll("[data-announce]")]
        .filter((node) => !node.closest("[hidden]"))
        .map((node) => [...node.querySelectorAll(".readout-label, output")].map((part) => part.textContent.trim())
          .filter(Boolean).join(" ") || node.textContent.trim())
        .join("; ");
      const announcer = this.section.querySelector(".widget-announce");
      if (announcer && said && announcer.textContent !== said) announcer.textContent = said;
    }, 1000);
  }

  // Copy the link to this scenario and say so; where the clipboard is refused (an insecure origin, a denied
  // permission), show the link itself, selected, for the reader to copy.
  async copyLink() {
    const link = this.page.scenarioLink(this);
    const status = this.section.querySelector(".copy-status");
    try {
      await navigator.clipboard.writeText(link);
      status.textContent = TEXT.widget.copied;
    } catch {
      const box = document.createElement("input");
      box.type = "text";
      box.readOnly = true;
      box.value = link;
      box.className = "copy-fallback";
      box.setAttribute("aria-label", TEXT.widget.copy_failed);
      status.replaceChildren(document.createTextNode(`${TEXT.widget.copy_failed} `), box);
      box.select();
      return;
    }
    clearTimeout(this.copyTimer);
    this.copyTimer = setTimeout(() => { status.textContent = ""; }, 4000);
  }

  showError(error) {
    this.statusText.textContent = this.text.error;
    this.statusText.parentElement.hidden = false;
    console.warn(`inferlab: ${this.id}: ${error.message}`);
  }
}

// Mark a control as one that does not apply (noteId: the note saying why) or as one that does (null).
function markInert(control, noteId) {
  control.toggleAttribute("data-inert", noteId !== null);
  const described = control.matches("fieldset") ? [control] : control.querySelectorAll("input, select");
  for (const element of described) {
    if (noteId === null) element.removeAttribute("aria-describedby");
    else element.setAttribute("aria-describedby", noteId);
  }
}
