// The one client script: finds every [data-widget] section, draws its pre-rendered view, and
// connects it to a single Python worker. It does no simulator maths.
import { answerRevealer } from "./answers.js";
import { Runtime } from "./runtime.js";
import { followScenarioLinks } from "./scenarios.js";
import { keepPlaceOnSwitch } from "./language.js";
import { available, keepForOffline, Unreachable } from "./offline.js";
import { LessonProgress, showHomeProgress } from "./progress.js";
import { layOutAllForKeyboard, watchScrolling } from "./scroll.js";
import { Formula } from "./terms.js";
import { Widget } from "./widget.js";
import { writeUrlState } from "./urlstate.js";

const STARTS_UNSEEN_MS = 1000;
const IDLE_WAIT_MS = 2000;

// Safari has no requestIdleCallback: a task soon is the nearest it has.
const whenIdle = (run) =>
  window.requestIdleCallback ? requestIdleCallback(run, { timeout: IDLE_WAIT_MS }) : setTimeout(run, 50);

function main() {
  const sections = [...document.querySelectorAll("[data-widget]")];
  const runtime = new Runtime();
  if (sections.length > 0) {
    // Python starts once the page has drawn its first frame (a task after a frame's rendering follows its paint;
    // a page in a background tab draws none, and starts after STARTS_UNSEEN_MS). Started earlier, its downloads,
    // the compile and Python's start share two cores with the page's first layout and slow it by a third and more,
    // for nothing: Python is ready as soon either way (bench/, "first contentful paint").
    let started = false;
    const start = () => {
      if (!started) runtime.start();
      started = true;
    };
    requestAnimationFrame(() => setTimeout(start));
    setTimeout(start, STARTS_UNSEEN_MS);
    runtime.useWidgets([...new Set(sections.map((section) => section.dataset.widget))]);
  }
  const views = {};
  const widgets = [];
  const widgetsById = new Map();
  const formulas = [];
  // The student's answers and sections read, kept in this browser (null where storage is refused).
  const progress = LessonProgress.open(document.querySelector("article[data-lesson]")?.dataset.lesson);
  // The URL follows the controls, but not on every slider step: browsers throttle history updates.
  let urlTimer = null;
  let plotly = null;
  let plotlySoon = null; // watches the widgets with figures until one is two screens away
  const revealAnswer = answerRevealer();
  const page = {
    slowRuntime: null, // the slow widgets' worker, if the page has any (below)
    // plotly.js, loaded once, when the first figure is about to be seen. Offline, it may not be kept yet (the
    // service worker keeps it on use): the worker is asked first, and a load that fails is tried again next time.
    plotly() {
      plotly ??= (async () => {
        const src = new URL(document.documentElement.dataset.plotly, document.baseURI).href;
        if (!(await available(src))) throw new Unreachable(src);
        return new Promise((resolve, reject) => {
          const script = document.createElement("script");
          script.src = src;
          script.onload = () => resolve(window.Plotly);
          script.onerror = () => reject(new Error(src));
          document.head.append(script);
        });
      })().catch((error) => {
        plotly = null;
        throw error;
      });
      return plotly;
    },
    // plotly.js made ready ahead of the first figure, once Python has settled (its boot has the CPU first) and a
    // widget with figures is within two screens: evaluated in one idle moment, a first figure rehearsed in another
    // (unless a plot was drawn meanwhile), so that neither adds to the task that draws the first plot.
    preparePlotly(widget) {
      plotlySoon ??= new IntersectionObserver((entries) => {
        const near = entries.find((entry) => entry.isIntersecting);
        if (!near) return;
        plotlySoon.disconnect();
        const first = widgets.find((each) => each.section === near.target);
        runtime.settled.then(() => whenIdle(async () => {
          try {
            await page.plotly();
          } catch {
            return; // loaded again when a figure is drawn, which says what failed
          }
          whenIdle(() => { if (!widgets.some((each) => each.figuresAsked)) first.rehearse(); });
        }));
      }, { rootMargin: "200% 0px" });
      plotlySoon.observe(widget.section);
    },
    // The link to a widget's current scenario: every widget's state (the address bar's, brought up to date now)
    // and the widget's own place on the page.
    scenarioLink(widget) {
      clearTimeout(urlTimer);
      writeUrlState(widgets);
      const url = new URL(window.location.href);
      url.hash = widget.id;
      return url.href;
    },
    viewApplied(widget, view, source) {
      views[widget.id] = view;
      revealAnswer(widget.id, view);
      progress?.viewApplied(widget, view, source);
      for (const formula of formulas) formula.viewChanged(widget.id);
      clearTimeout(urlTimer);
      urlTimer = setTimeout(() => writeUrlState(widgets), 150);
    },
  };
  // A module script runs once the document is parsed: every section is there.
  for (const section of sections) {
    const widget = new Widget(section, runtime, page);
    widgets.push(widget);
    widgetsById.set(widget.id, widget);
  }
  // Widgets whose renders may take long (sim/kit Widget.slow) get a second Python worker, so that no other widget
  // of this page or another tab waits for them. It starts once the first has settled (it then restores from the
  // snapshot that one saved, and its boot never competes with the page's first) and a slow widget nears the screen
  // (a reader who never gets there never pays for it). Until it is ready, they use the first.
  const slow = widgets.filter((widget) => widget.slow);
  if (slow.length > 0) {
    page.slowRuntime = new Runtime("slow");
    page.slowRuntime.useWidgets([...new Set(slow.map((widget) => widget.name))]);
    const near = new Promise((resolve) => {
      const observer = new IntersectionObserver((entries) => {
        if (!entries.some((entry) => entry.isIntersecting)) return;
        observer.disconnect();
        resolve();
      }, { rootMargin: "600px 0px" });
      for (const widget of slow) observer.observe(widget.section);
    });
    Promise.all([runtime.settled, near]).then(() => page.slowRuntime.start());
  }
  for (const figure of document.querySelectorAll("figure.formula")) formulas.push(new Formula(figure, widgetsById));
  progress?.restore(widgets);
  progress?.watchReading();
  showHomeProgress();
  keepPlaceOnSwitch();
  followScenarioLinks(widgetsById);
  watchScrolling();
  layOutAllForKeyboard();
  // The service worker waits until the page is served: its downloads must not compete with Python's boot.
  const served = sections.length === 0 ? Promise.resolve() : new Promise((resolve) => {
    runtime.onStatus((status) => { if (status !== "loading") resolve(); });
  });
  const offline = keepForOffline(served);
  // For tests and the curious: the newest view each widget received from Python; whether this page is kept offline.
  window.inferlab = { runtime, slowRuntime: page.slowRuntime ?? null, views, widgets, offline };
}

main();
