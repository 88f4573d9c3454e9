// The one client script: finds every [data-widget] section, draws its pre-rendered view, and
// connects it to a single Python worker. It does no simulator maths.
import { Runtime } from "./runtime.js";
import { Formula } from "./terms.js";
import { Widget } from "./widget.js";
import { writeUrlState } from "./urlstate.js";

function main() {
  const sections = [...document.querySelectorAll("[data-widget]")];
  const root = new URL(document.body.dataset.root || "./", document.baseURI);
  const simZip = new URL(document.body.dataset.simZip, root).href;
  const names = [...new Set(sections.map((section) => section.dataset.widget))];
  const runtime = new Runtime(simZip, names);
  const views = {};
  const widgets = [];
  const widgetsById = new Map();
  const formulas = [];
  // The URL follows the controls, but not on every slider step: browsers throttle history updates.
  let urlTimer = null;
  const page = {
    viewApplied(widget, view) {
      views[widget.id] = view;
      for (const formula of formulas) formula.viewChanged(widget.id);
      clearTimeout(urlTimer);
      urlTimer = setTimeout(() => writeUrlState(widgets), 150);
    },
  };
  if (sections.length > 0) runtime.start();
  // plotly.js is a deferred script after this module, so it runs after this and before DOMContentLoaded.
  document.addEventListener("DOMContentLoaded", () => {
    for (const section of sections) {
      const widget = new Widget(section, runtime, page);
      widgets.push(widget);
      widgetsById.set(widget.id, widget);
    }
    for (const figure of document.querySelectorAll("figure.formula")) formulas.push(new Formula(figure, widgetsById));
  }, { once: true });
  // For tests and the curious: the newest view each widget received from Python.
  window.inferlab = { runtime, views, widgets };
}

main();
